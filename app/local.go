package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Options configure a Local service.
type Options struct {
	// Store holds the documents. Required.
	Store store.Store
	// Root is the project's root directory: artifacts are hashed, drift
	// observed and file effects applied under it. Required.
	Root string
	// Config returns the ASDD configuration in force (nil: read
	// .asdd/config.yaml under Root on every operation).
	Config func() (*asdd.Config, error)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger receives warnings about effects that could not be applied
	// after a commit (nil: slog.Default()).
	Logger *slog.Logger
	// Warn, when set, is also told each such warning (the CLI prints them).
	Warn func(msg string)
	// Rules check generic writes (rollback) of each document (nil:
	// DocumentRules).
	Rules store.Rules
	// ReadOnly: the service records no validity mark (valid.go), so that
	// a read writes no file (`custodian check --read-only`, which promises
	// to write nothing); a manifest no mark names is checked in full.
	ReadOnly bool
}

// Local is the application layer over a store and the project's files: the
// CLI without a daemon, the runner, the monitor, and the daemon itself.
// Safe for concurrent use.
type Local struct {
	o Options
	// fx serializes file effects of this process (markers, notices, the
	// failure log), so that concurrent commits cannot lose a row.
	fx sync.Mutex
	// held is the ASDD manifest this service decoded last, with its
	// revision (model; the store hands back the ones it committed).
	held atomic.Pointer[decodedManifest]
	// recent is the ASDD manifest this service committed or read last:
	// what an operation observes (observer.Observed) without a read.
	recent atomic.Pointer[asdd.Manifest]
	// proj is the project directory (Root), opened on the first
	// operation that reads or writes its files and kept until Close: the
	// daemon opened and closed it for every proposal (four system calls,
	// 3% of the CPU of bench daemon's real proposals). Like the store,
	// it holds on to the directory it was given.
	projMu sync.Mutex
	proj   atomic.Pointer[effects.Project]
}

var _ Service = (*Local)(nil)

// NewLocal returns the application layer over o.Store and o.Root.
func NewLocal(o Options) *Local {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Rules == nil {
		o.Rules = DocumentRules
	}
	if o.Config == nil {
		root := o.Root
		o.Config = func() (*asdd.Config, error) { return ReadConfig(root) }
	}
	return &Local{o: o}
}

// Close releases the project directory; the store belongs to the caller.
func (l *Local) Close() error {
	l.projMu.Lock()
	defer l.projMu.Unlock()
	if p := l.proj.Swap(nil); p != nil {
		return p.Close()
	}
	return nil
}

// project returns the project's files (Root), opened on first use.
func (l *Local) project() (*effects.Project, error) {
	if p := l.proj.Load(); p != nil {
		return p, nil
	}
	l.projMu.Lock()
	defer l.projMu.Unlock()
	if p := l.proj.Load(); p != nil {
		return p, nil
	}
	p, err := effects.Open(l.o.Root)
	if err != nil {
		return nil, err
	}
	l.proj.Store(p)
	return p, nil
}

// Rules returns the checks of generic writes.
func (l *Local) Rules() store.Rules { return l.o.Rules }

// Store returns the store the service commits to.
func (l *Local) Store() store.Store { return l.o.Store }

// warn reports an effect that failed after its commit.
func (l *Local) warn(rev uint64, err error) string {
	msg := err.Error()
	l.o.Logger.Warn("effects not applied", "revision", rev, "error", msg)
	if l.o.Warn != nil {
		l.o.Warn(fmt.Sprintf("committed revision %d, but: %s", rev, msg))
	}
	return msg
}

// root opens nothing: it reports whether the service has a project root.
func (l *Local) hasRoot() bool { return l.o.Root != "" }

// update is Store.Update for an operation on one of the custodian's
// documents. A document nobody journaled yet (revision 0 with a value: a
// plugin, a person or an older tool wrote it) is checked against its
// kind's rules before the operation sees it, and refused as CORRUPT_STATE
// naming what is wrong; the operation's first commit adopts it (the store
// journals it, its unknown members kept). Every kind and every operation
// takes this one path.
func (l *Local) update(ctx context.Context, key string, fn store.UpdateFunc, opts ...store.UpdateOption) (store.Result, error) {
	return l.o.Store.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		if cur.Revision == 0 && cur.Exists() {
			if err := l.o.Rules.Validate(key, nil, cur.Value); err != nil {
				// The operation's own refusal of the document, in its
				// words, where it has one.
				if _, ferr := fn(cur); ferr != nil {
					return store.Change{}, ferr
				}
				msg := err.Error()
				if re, ok := reason.As(err); ok {
					msg = re.Message
				}
				return store.Change{}, reason.New(reason.CorruptState, "%s was written by another tool and does not match its schema, so it is not adopted (nothing changed): %s", key, msg)
			}
		}
		return fn(cur)
	}, opts...)
}
