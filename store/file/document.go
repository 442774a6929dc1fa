package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// errClosed is returned by every method after Close.
var errClosed = errors.New("store is closed")

func notFound(key string) error {
	return reason.New(reason.NotFound, "no document %s (nothing committed yet)", key)
}

// has reports whether the document has a value.
func (d *doc) has() bool { return d.cur != nil }

// bytes returns the current value's bytes, made now if they were not.
func (d *doc) bytes() ([]byte, error) {
	if d.cur == nil {
		return nil, nil
	}
	return d.cur.bytes()
}

// doc is the in-process state of one document.
type doc struct {
	s     *Store
	p     paths
	flock *flock.Flock
	coop  *flock.Flock // paths.coopLock, nil for none

	mu sync.Mutex // serialises this process's goroutines; flock the processes

	// The view of the files as of the last refresh or commit.
	loaded bool
	j      journalView  // the journal files (journal.go)
	snap   snapshotView // the snapshot file (snapshot.go)
	rev    uint64
	last   *store.Record
	// cur is the current value (nil: none): outside Hold mode its bytes
	// are the snapshot's; in Hold mode they are compact, or made from
	// the model of the commit that made it only when needed.
	cur     *value
	sum     string // canonical sum of cur, when known ("": not computed)
	adopted bool   // value came from a snapshot with no journal

	broken error // a sync failed: the state on disk is unknown
	// readOnly is why the last load could not finish a repair on disk
	// (snapshot rewrite, torn tail cut off: a full disk): reads are
	// served, commits refused until a load succeeds.
	readOnly error
	edit     *capturedEdit // a direct edit load found, to settle (direct.go)
	notices  []DirectEdit  // edits settled, to tell once the snapshot holds them
	repair   *repairState  // set during Repair (repair.go)
	cmu      sync.Mutex    // guards changed
	changed  chan struct{} // closed and replaced on every commit (wakes watchers)

	held *hold // Hold mode only (nil outside it; hold.go)
}

type fileID struct {
	exists bool
	dev    uint64
	ino    uint64
	size   int64
	mtime  int64
}

func (d *doc) notify() {
	d.cmu.Lock()
	close(d.changed)
	d.changed = make(chan struct{})
	d.cmu.Unlock()
}

// wake returns the channel closed at the next commit.
func (d *doc) wake() <-chan struct{} {
	d.cmu.Lock()
	defer d.cmu.Unlock()
	return d.changed
}

// pathError says what a file system error means for the document key (a
// reason error, already saying it, is returned as it is).
func pathError(key string, err error) error {
	if _, ok := reason.As(err); ok || err == nil {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return reason.New(reason.InvalidInput, "document key %q resolves outside the project root", key)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return reason.New(reason.InvalidInput, "document key %q: a parent is not a directory", key)
	}
	if errors.Is(err, syscall.ELOOP) {
		return reason.New(reason.CorruptState, "%s: a state file is a symlink loop: %v", key, err)
	}
	return fmt.Errorf("%s: %w", key, err)
}

func (d *doc) stat(name string) (fileID, error) {
	fi, err := d.s.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fileID{}, nil
	}
	if err != nil {
		return fileID{}, pathError(d.p.key, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// Follow it through the root: a link inside the project is fine, one
		// that escapes is refused.
		fi, err = d.s.root.Stat(name)
		if err != nil {
			return fileID{}, pathError(d.p.key, err)
		}
	}
	return idOf(fi), nil
}

func (d *doc) logf(msg string, args ...any) {
	d.s.opts.Logger.Warn(msg, append([]any{"document", d.p.key}, args...)...)
}

func (d *doc) fault(point string) error {
	if d.s.opts.Fault == nil {
		return nil
	}
	return d.s.opts.Fault(point)
}

func stamp(t time.Time) string { return t.UTC().Format("20060102T150405.000000000Z") }

// moveAside renames a damaged file out of the way, never overwriting it.
func (d *doc) moveAside(name, kind string) (string, error) {
	dst := name + "." + kind + "-" + stamp(d.s.opts.Now())
	if err := d.s.root.Rename(name, dst); err != nil {
		return "", fmt.Errorf("move %s aside: %w", name, err)
	}
	if err := d.syncDir(); err != nil {
		return "", err
	}
	return dst, nil
}

func (d *doc) syncDir() error {
	if err := d.fault("dir.sync"); err != nil {
		return fmt.Errorf("sync directory %s: %w", d.p.dir, err)
	}
	f, err := d.s.root.Open(d.p.dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", d.p.dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", d.p.dir, err)
	}
	return nil
}
