package file

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/internal/pidfile"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// Options configure a Store.
type Options struct {
	// Limits bound document size and depth (64 MiB, 64 levels by default).
	Limits store.Limits
	// Now is the clock for record times; time.Now by default.
	Now func() time.Time
	// Logger receives recovery notices; slog.Default() by default.
	Logger *slog.Logger
	// PollInterval is how often Watch looks for commits made by other
	// processes (commits of this process wake watchers at once). 100 ms by
	// default.
	PollInterval time.Duration
	// Fault, when set, is called at each named point of the persistence
	// path ("journal.write", "journal.sync", "snapshot.write", …,
	// "dir.sync": grep d.fault) and a non-nil result fails that step as the
	// operating system would. For crash and fault-injection tests only.
	Fault func(point string) error

	// Hold selects daemon mode (custodian serve; hold.go): one process
	// owns the documents until Close, serves reads from memory,
	// group-commits and rewrites snapshots in the background.
	Hold bool
	// PidFile is the daemon lock file, relative to the project root
	// (".asdd/state/custodian.pid" by default). Hold mode only.
	PidFile string
	// SnapshotInterval is the least time between two rewrites of a
	// document's snapshot in Hold mode; 50 ms by default.
	SnapshotInterval time.Duration
	// SnapshotOnCommit, in Hold mode, names the documents whose snapshot
	// must hold a commit before it is acknowledged: those other tools read
	// from disk right after changing them through the custodian (a
	// plugin's hook running jq on .impl/manifest.json).
	SnapshotOnCommit func(key string) bool
	// OnSync, when set, is told after each journal fsync of Hold mode how
	// many commits and bytes it made durable and how long it took (the
	// daemon's group-commit metrics).
	OnSync func(commits int, bytes int64, took time.Duration)
	// SegmentBytes is the size past which a document's live journal is
	// sealed as a segment and a new one started (segment.go: the rule,
	// the names, what recovery reads). 0 takes
	// $CUSTODIAN_JOURNAL_SEGMENT_BYTES when set, else
	// DefaultSegmentBytes; a negative value never rotates.
	SegmentBytes int64
	// JournalKey, when set, authenticates the journal: every record and
	// the anchor carry an HMAC under it (anchor.go). Nil takes
	// $CUSTODIAN_JOURNAL_KEY, or the content of the file
	// $CUSTODIAN_JOURNAL_KEY_FILE names (outside the project); neither set,
	// or an empty non-nil key: no key.
	JournalKey []byte
	// DirectEdits is what happens to a snapshot changed behind the
	// custodian's back (direct.go): DirectEditReject (the default) keeps
	// it aside and restores the committed value, DirectEditAdopt commits
	// it as actor "direct-edit" when Validate accepts it.
	DirectEdits DirectEditPolicy
	// Validate checks a direct edit before it is adopted, and a snapshot a
	// repair keeps (prev is the committed value): the composition root
	// passes the documents' rules (app.DocumentRules). Nil checks nothing
	// beyond the value parsing.
	Validate store.Validator
	// DirectEditRule, when set, is one more check of a direct edit only
	// (not of what a repair keeps): the ASDD manifest's rule that a hand
	// edit changes nothing the rules own.
	DirectEditRule store.Validator
	// OnDirectEdit, when set, is told of every direct edit found and what
	// became of it.
	OnDirectEdit func(DirectEdit)
	// Witness is a directory outside the work tree where the store keeps a
	// copy of each document's anchor, so that a state put back with its
	// anchor is detected (witness.go). "" keeps none; projectroot.WitnessDir
	// gives the project's.
	Witness string
}

// DefaultPidFile is the daemon lock file of Hold mode.
const DefaultPidFile = pidfile.Default

// DefaultSegmentBytes is the default of Options.SegmentBytes: 64 MiB.
const DefaultSegmentBytes = 64 << 20

// SegmentBytesEnv sets Options.SegmentBytes when it is 0 (bytes; negative:
// never rotate), in every process that opens a store.
const SegmentBytesEnv = "CUSTODIAN_JOURNAL_SEGMENT_BYTES"

// Store is the file backend. It is safe for concurrent use by many
// goroutines and, through the lock files, by many processes.
type Store struct {
	dir  string
	root *os.Root
	opts Options

	mu     sync.Mutex
	docs   map[string]*doc
	closed bool

	daemon *daemon // Hold mode only
	key    []byte  // the journal key (Options.JournalKey), nil: none
}

var _ store.Store = (*Store)(nil)

// Open opens the store of the project rooted at dir. Nothing is read until a
// document is first used.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	opts.PidFile = cmp.Or(opts.PidFile, DefaultPidFile)
	if opts.SnapshotInterval <= 0 {
		opts.SnapshotInterval = 50 * time.Millisecond
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.SegmentBytes == 0 {
		opts.SegmentBytes = DefaultSegmentBytes
		if v := os.Getenv(SegmentBytesEnv); v != "" {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n == 0 {
				return nil, reason.New(reason.InvalidInput, "$%s=%q: want a number of bytes (negative: never rotate)", SegmentBytesEnv, v)
			}
			opts.SegmentBytes = n
		}
	}
	opts.SegmentBytes = max(opts.SegmentBytes, 0) // from here on, 0: never rotate
	if opts.JournalKey == nil {
		if opts.JournalKey, err = journalKeyFromEnv(abs); err != nil {
			return nil, err
		}
	}
	switch opts.DirectEdits = cmp.Or(opts.DirectEdits, DirectEditReject); opts.DirectEdits {
	case DirectEditReject, DirectEditAdopt:
	default:
		return nil, reason.New(reason.InvalidInput, "direct edits policy %q: want %q or %q", opts.DirectEdits, DirectEditAdopt, DirectEditReject)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{dir: abs, root: r, opts: opts, docs: map[string]*doc{}}
	if len(opts.JournalKey) > 0 {
		s.key = opts.JournalKey
	}
	if opts.Hold {
		if err := s.startDaemon(); err != nil {
			r.Close()
			return nil, err
		}
	}
	return s, nil
}

// Dir returns the project root the store keeps its files under.
func (s *Store) Dir() string { return s.dir }

// Close releases the store; in Hold mode it waits for pending journal
// syncs, rewrites every snapshot that is behind and releases the locks.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	docs := slices.Collect(maps.Values(s.docs))
	s.mu.Unlock()
	var err error
	if s.daemon != nil {
		err = s.stopDaemon(docs)
	}
	for _, d := range docs {
		d.notify()
	}
	if cerr := s.root.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) doc(key string) (*doc, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	d, ok := s.docs[key]
	if !ok {
		p := pathsFor(key)
		d = &doc{s: s, p: p, flock: flock.New(filepath.Join(s.dir, filepath.FromSlash(p.lock))), changed: make(chan struct{})}
		if s.daemon != nil {
			d.held = &hold{d: d}
		}
		if p.coopLock != "" {
			d.coop = flock.New(filepath.Join(s.dir, filepath.FromSlash(p.coopLock)))
		}
		s.docs[key] = d
	}
	return d, nil
}

// Get returns the latest committed document.
func (s *Store) Get(ctx context.Context, key string) (store.Document, error) {
	d, err := s.doc(key)
	if err != nil {
		return store.Document{}, err
	}
	if d.held.isActive() {
		// Hold mode: the latest revision, from memory, without the commit
		// lock (an update function running holds it), once it is durable
		// (a write in flight is waited for, as its writer waits: a read
		// never returns a revision older than one a compare-and-swap saw).
		v := d.held.latest.Load()
		if err := d.held.awaitDurable(v.rev); err != nil {
			return store.Document{}, err
		}
		if !v.exists() {
			return store.Document{}, notFound(key)
		}
		return v.val.document(key, v.rev), nil
	}
	var out store.Document
	err = d.read(ctx, func(d *doc) (uint64, error) {
		if !d.has() {
			return 0, notFound(key)
		}
		out = d.cur.document(key, d.rev)
		return d.rev, nil
	})
	return out, err
}

// GetAt returns the document as it was right after revision rev. Revision 0
// is the state before the first commit (no value unless the file was adopted).
func (s *Store) GetAt(ctx context.Context, key string, rev uint64) (store.Document, error) {
	d, err := s.doc(key)
	if err != nil {
		return store.Document{}, err
	}
	out := store.Document{Key: key, Revision: rev}
	err = d.read(ctx, func(d *doc) (uint64, error) {
		if rev > d.rev {
			return 0, reason.New(reason.NotFound, "%s has no revision %d (latest is %d)", key, rev, d.rev)
		}
		var err error
		if rev == d.rev {
			out = d.cur.document(key, rev)
			out.Value, err = d.bytes() // a history read: the bytes
		} else {
			out.Value, err = d.replayTo(rev)
		}
		return rev, err
	})
	return out, err
}

// History returns the records with from <= rev <= to (to 0: all).
func (s *Store) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	d, err := s.doc(key)
	if err != nil {
		return nil, err
	}
	var out []store.Record
	err = d.read(ctx, func(d *doc) (uint64, error) {
		if to == 0 || to > d.rev {
			to = d.rev
		}
		out, err = d.readRecords(from, to)
		if len(out) == 0 {
			return 0, err
		}
		return out[len(out)-1].Rev, err
	})
	return out, err
}

// read runs f under the document's lock once it is up to date, for a
// document that has a revision or a value (NOT_FOUND otherwise), and
// returns once the revision f read is durable (Hold mode). A file nobody
// journaled is read as it is, without the lock (a read leaves the project
// as it was: no lock file): f gets it as revision 0, with no records.
func (d *doc) read(ctx context.Context, f func(d *doc) (rev uint64, err error)) error {
	if snap, ok := d.unlockedForeign(); ok && snap != nil {
		_, err := f(&doc{s: d.s, p: d.p, cur: bytesValue(snap), adopted: true})
		return err
	}
	var rev uint64
	err := d.lockedRead(ctx, func() (err error) {
		if err := d.refresh(); err != nil {
			return err
		}
		if d.rev == 0 && !d.has() {
			return notFound(d.p.key)
		}
		rev, err = f(d)
		return err
	})
	if err != nil {
		return err
	}
	return d.held.awaitDurable(rev)
}

// Keys lists the documents that have a journal under the project root.
func (s *Store) Keys(ctx context.Context) ([]string, error) {
	var keys []string
	err := fs.WalkDir(s.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Listed so that verify reports them: a directory where a journal
		// belongs, an anchor whose journal is gone.
		k, ok := keyForJournal(p)
		if !ok && !e.IsDir() {
			k, ok = keyForAnchor(p)
		}
		if ok {
			keys = append(keys, k)
		}
		if e.IsDir() && (ok || e.Name() == ".git" || e.Name() == "node_modules" || e.Name() == "vendor") {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	keys = append(keys, s.witnessedKeys()...) // a witness whose files are gone: verify reports it
	sort.Strings(keys)
	return slices.Compact(keys), nil // a journal's segments name its key too
}

// Update runs fn against the latest value under the document's lock and
// commits what it returns.
func (s *Store) Update(ctx context.Context, key string, fn store.UpdateFunc, opts ...store.UpdateOption) (store.Result, error) {
	o := store.ApplyOptions(opts)
	d, err := s.doc(key)
	if err != nil {
		return store.Result{}, err
	}
	held := d.holding() // known to exist: no stat(2) per commit on the daemon's hot path
	if !o.Create && !held {
		// Nothing to update where the document's directory does not exist:
		// say so without creating the directory and its lock file.
		if _, err := s.root.Stat(filepath.FromSlash(d.p.dir)); errors.Is(err, fs.ErrNotExist) {
			return store.Result{}, notFound(key)
		}
	}
	if !held && (o.IfRevision == nil || *o.IfRevision == 0) {
		if err := d.precheck(fn, o.Create); err != nil {
			return store.Result{}, err
		}
	}
	var res store.Result
	lock := d.locked
	if !o.Create {
		// A document that does not exist is NOT_FOUND at once: a refused
		// request leaves no directory or lock file behind.
		lock = d.lockedRead
	}
	err = lock(ctx, func() error {
		if b := cmp.Or(d.broken, d.held.syncFailure()); b != nil {
			return fmt.Errorf("%s: refusing to write after a failed sync (reopen to recover): %w", key, b)
		}
		if d.readOnly != nil {
			// A recovery step could not be written (a full disk): retry
			// it now, and refuse to commit while it fails.
			d.loaded = false
		}
		if err := d.refresh(); err != nil {
			return err
		}
		if d.readOnly != nil {
			return fmt.Errorf("%s: refusing to write: %w", key, d.readOnly)
		}
		if o.IfRevision != nil && *o.IfRevision != d.rev {
			return reason.New(reason.Conflict, "%s is at revision %d, not %d", key, d.rev, *o.IfRevision)
		}
		if !d.has() && !o.Create {
			return notFound(key)
		}
		cur := d.cur.document(key, d.rev)
		ch, err := fn(cur)
		if err != nil {
			return err
		}
		if err := ch.Check(); err != nil {
			return err
		}
		res = store.Result{Document: cur}
		if ch.Empty() {
			return nil
		}
		rec, err := d.commit(ch)
		if rec != nil {
			res = store.Result{Document: d.cur.document(key, d.rev), Changed: true, Record: rec}
		}
		return err
	})
	if err != nil {
		return res, err
	}
	// In Hold mode the commit is acknowledged once its journal line is
	// synced (shared with whoever else wrote meanwhile); an unchanged
	// result waits too, so it never reports a value not yet durable.
	if err = d.held.awaitDurable(res.Revision); err != nil {
		return store.Result{}, err
	}
	if res.Changed && d.held.isActive() && s.opts.SnapshotOnCommit != nil && s.opts.SnapshotOnCommit(key) {
		if err := d.held.flushSnapshot(true); err != nil {
			// Committed and durable: the snapshot catches up later.
			d.logf("snapshot not rewritten at commit; the journal holds the commit", "error", err)
		}
	}
	return res, err
}

// precheck runs fn once, without the lock, on a document no custodian has
// touched yet (unlockedForeign), so that a change fn refuses leaves the
// project as it was, with no directory or lock file made for it. fn runs
// again on the locked path (UpdateFunc may run more than once).
func (d *doc) precheck(fn store.UpdateFunc, create bool) error {
	snap, ok := d.unlockedForeign()
	if !ok || snap == nil && !create {
		return nil // the locked path reports it
	}
	_, err := fn(store.Document{Key: d.p.key, Value: snap})
	return err
}

// unlockedForeign reads, without the lock, a document no custodian has
// ever locked (no lock file), journaled (no journal, segment, anchor or
// mark) or half-written (no temp file), outside Hold mode: the file
// another tool wrote, when it parses (nil: there is none). ok is false
// for anything else, which the locked path loads and recovers.
func (d *doc) unlockedForeign() (snap []byte, ok bool) {
	if d.s.daemon != nil {
		return nil, false
	}
	absent := func() bool {
		for _, name := range []string{d.p.lock, d.p.journal, d.p.tmp, d.p.head, d.p.marks} {
			if id, err := d.stat(name); err != nil || id.exists {
				return false
			}
		}
		segs, err := d.segments()
		return err == nil && len(segs) == 0
	}
	if !absent() {
		return nil, false
	}
	snap, err := d.readFile(d.p.snap)
	if err != nil {
		return nil, false
	}
	if snap != nil {
		if _, err := jsonval.ParseValue(snap, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30}); err != nil {
			return nil, false // the locked path refuses it (CORRUPT_STATE)
		}
	}
	if !absent() {
		return nil, false // a custodian came meanwhile
	}
	return snap, true
}
