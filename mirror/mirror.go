package mirror

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/internal/atomicfile"
	"github.com/custodian-dev/custodian/store"
)

// Options configure a Mirror.
type Options struct {
	// Source names the store the mirrors come from (an etcd:// URL without
	// its password); it is recorded in every state file.
	Source string
	// Logger receives a warning for every direct edit kept aside and every
	// mirror restored; slog.Default() when nil.
	Logger *slog.Logger
	// Now is the clock (times in state files and kept-aside names).
	Now func() time.Time
	// OnEdit, when set, is called for every direct edit or deletion found
	// (after the edited file was kept aside and the mirror restored).
	OnEdit func(Edit)
	// NoNotice turns off the escalation notice written for a direct edit
	// under .asdd/escalations/.
	NoNotice bool
}

// Mirror writes documents to their usual paths under a project root. It is
// safe for concurrent use, and several processes may mirror into one root
// at once (the writes in one directory are serialised by a lock file).
type Mirror struct {
	root *os.Root
	dir  string
	opts Options

	mu      sync.Mutex
	locks   map[string]*dirLock // by directory
	cleaned map[string]bool     // keys whose stale temporary files were removed
}

// dirLock serialises the writes of the mirrors of one directory.
type dirLock struct {
	mu sync.Mutex // held for a whole write, with fl
	fl *flock.Flock

	lastMu sync.Mutex
	// last is, per key, the latest version this Mirror wrote or found
	// current: what Restore puts back.
	last map[string]store.Document
}

// Open returns a Mirror of the project at dir.
func Open(dir string, opts Options) (*Mirror, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("mirror: open project root: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Mirror{root: r, dir: dir, opts: opts, locks: map[string]*dirLock{}, cleaned: map[string]bool{}}, nil
}

// Close releases the Mirror's files.
func (m *Mirror) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.locks {
		if l.fl != nil {
			_ = l.fl.Close()
		}
	}
	m.locks = map[string]*dirLock{}
	return m.root.Close()
}

// Dir is the project root.
func (m *Mirror) Dir() string { return m.dir }

// Action is what Write did.
type Action string

// The actions of Write.
const (
	// Current: the mirror already held this revision (or a later one).
	Current Action = "current"
	// Written: the mirror was created or brought up to date.
	Written Action = "written"
	// Restored: the mirror had been edited or deleted by hand; the edited
	// file was kept aside and the mirror written again.
	Restored Action = "restored"
)

// Outcome is the result of one Write.
type Outcome struct {
	Key    string `json:"key"`
	Rev    uint64 `json:"rev"` // the revision the mirror holds now
	Action Action `json:"action"`
	Edit   *Edit  `json:"direct_edit,omitempty"`
}

// Edit is a direct edit (or deletion) of a mirror found by Write.
type Edit struct {
	Key string `json:"key"`
	// Kind is "edited" (the file differs from what was written for its
	// revision), "deleted", or "unmirrored" (a file was there before the
	// first mirror, with other content).
	Kind string `json:"kind"`
	// KeptAs is where the edited file now is (empty for a deletion).
	KeptAs string `json:"kept_as,omitempty"`
	// Rev is the revision the mirror held before the edit (0: unknown).
	Rev uint64 `json:"rev,omitempty"`
	// Notice is the escalation notice written, if any.
	Notice string    `json:"notice,omitempty"`
	At     time.Time `json:"at"`
}

// lock takes the lock of a directory's mirrors (making the directory).
func (m *Mirror) lock(dir string) (*dirLock, error) {
	m.mu.Lock()
	l, ok := m.locks[dir]
	if !ok {
		l = &dirLock{last: map[string]store.Document{}}
		m.locks[dir] = l
	}
	m.mu.Unlock()
	l.mu.Lock()
	// The directory may have been removed (and the lock file with it)
	// since the last write: make it again, and lock the lock file that is
	// there now, not an unlinked one.
	if err := m.root.MkdirAll(dir, 0o755); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("mirror: %w", err)
	}
	if l.fl != nil {
		if _, err := m.root.Lstat(lockPath(dir)); err != nil {
			_ = l.fl.Close()
			l.fl = nil
		}
	}
	if l.fl == nil {
		l.fl = flock.New(m.abs(lockPath(dir)))
	}
	if err := l.fl.Lock(); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("mirror: lock %s: %w", lockPath(dir), err)
	}
	return l, nil
}

func (l *dirLock) unlock() {
	_ = l.fl.Unlock()
	l.mu.Unlock()
}

func (m *Mirror) abs(rel string) string { return m.dir + string(os.PathSeparator) + rel }

// Write makes the mirror of doc.Key hold doc (revision doc.Revision and its
// value), unless it already holds that revision or a later one. A mirror
// that was edited or deleted by hand is restored, the edited file kept
// aside as <file>.direct-edit-<time>, and the edit reported (Outcome.Edit,
// the log, Options.OnEdit and an escalation notice). A document with no
// value is not mirrored.
func (m *Mirror) Write(doc store.Document) (Outcome, error) {
	outs, errs := m.WriteBatch([]store.Document{doc})
	return outs[0], errs[0]
}

// WriteBatch is Write of several distinct documents at once. The
// documents of one directory are written together: their files are
// written and fsynced concurrently, the directory's state file once for
// all of them, and the directory fsynced once after the renames.
func (m *Mirror) WriteBatch(docs []store.Document) ([]Outcome, []error) {
	outs := make([]Outcome, len(docs))
	errs := make([]error, len(docs))
	byDir := map[string][]int{}
	var dirs []string
	for i, doc := range docs {
		outs[i] = Outcome{Key: doc.Key, Action: Current}
		if err := store.CheckKey(doc.Key); err != nil {
			errs[i] = err
			continue
		}
		if doc.Value == nil || doc.Revision == 0 {
			continue
		}
		dir := pathsFor(doc.Key).dir
		if _, ok := byDir[dir]; !ok {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], i)
	}
	var wg sync.WaitGroup
	for _, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx := byDir[dir]
			batch := make([]store.Document, len(idx))
			for j, i := range idx {
				batch[j] = docs[i]
			}
			bo, be := m.writeDir(dir, batch, false)
			for j, i := range idx {
				outs[i], errs[i] = bo[j], be[j]
			}
		}()
	}
	wg.Wait()
	return outs, errs
}

// Restore checks the mirror of key against the latest version this Mirror
// wrote or found current, and restores it if it was edited or deleted by
// hand. It does nothing for a key this Mirror has not written.
func (m *Mirror) Restore(key string) (Outcome, error) {
	if err := store.CheckKey(key); err != nil {
		return Outcome{}, err
	}
	dir := pathsFor(key).dir
	m.mu.Lock()
	l := m.locks[dir]
	m.mu.Unlock()
	if l == nil {
		return Outcome{Key: key, Action: Current}, nil
	}
	l.lastMu.Lock()
	last, ok := l.last[key]
	l.lastMu.Unlock()
	if !ok {
		return Outcome{Key: key, Action: Current}, nil
	}
	// A mirror that holds what this Mirror last wrote is intact: no need
	// to take the lock (the notifications of its own writes come here).
	if cur, err := m.readFile(key); err == nil && bytes.Equal(cur, last.Value) {
		return Outcome{Key: key, Rev: last.Revision, Action: Current}, nil
	}
	outs, errs := m.writeDir(dir, []store.Document{last}, true)
	return outs[0], errs[0]
}

// plan is what writeDir does for one document.
type plan struct {
	doc    store.Document
	out    Outcome
	err    error
	edit   *Edit
	write  bool
	staged *atomicfile.Temp
}

// writeDir writes documents of one directory (distinct keys) under the
// directory's lock. With restore, a mirror that holds a later revision
// than its document by the state file is left alone.
func (m *Mirror) writeDir(dir string, docs []store.Document, restore bool) ([]Outcome, []error) {
	outs := make([]Outcome, len(docs))
	errs := make([]error, len(docs))
	l, err := m.lock(dir)
	if err != nil {
		for i, d := range docs {
			outs[i], errs[i] = Outcome{Key: d.Key}, err
		}
		return outs, errs
	}
	defer l.unlock()
	ds, err := m.readDirState(dir)
	if err != nil {
		for i, d := range docs {
			outs[i], errs[i] = Outcome{Key: d.Key}, err
		}
		return outs, errs
	}
	now := m.opts.Now().UTC()
	plans := make([]*plan, len(docs))
	for i, doc := range docs {
		pl := &plan{doc: doc, out: Outcome{Key: doc.Key}}
		plans[i] = pl
		pl.err = m.classify(ds, pl, restore, now)
	}
	// Stage the new contents (written and fsynced) concurrently.
	var wg sync.WaitGroup
	for _, pl := range plans {
		if pl.err != nil || !pl.write {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pl.staged, pl.err = atomicfile.Stage(m.root, pl.doc.Key, pl.doc.Value, 0o644)
		}()
	}
	wg.Wait()
	staged := false
	for _, pl := range plans {
		if pl.err != nil || !pl.write {
			continue
		}
		base := path.Base(pl.doc.Key)
		next := &State{Key: pl.doc.Key, Rev: pl.doc.Revision, File: store.HashBytes(pl.doc.Value), Written: now}
		if prev := ds.Documents[base]; prev != nil && prev.Key == pl.doc.Key {
			next.Recent = prev.recent()
		}
		ds.Documents[base] = next
		staged = true
	}
	if staged {
		ds.Store = cmp.Or(m.opts.Source, ds.Store)
		m.commitDir(dir, ds, plans)
	}
	for i, pl := range plans {
		if pl.err != nil {
			outs[i], errs[i] = Outcome{Key: pl.doc.Key}, fmt.Errorf("mirror %s: %w", pl.doc.Key, pl.err)
			continue
		}
		if pl.write {
			pl.out.Rev, pl.out.Action = pl.doc.Revision, Written
			if pl.edit != nil {
				pl.out.Action = Restored
				m.report(pl.edit)
				pl.out.Edit = pl.edit
			}
		}
		l.lastMu.Lock()
		if last, ok := l.last[pl.doc.Key]; !restore && (!ok || last.Revision <= pl.doc.Revision) {
			l.last[pl.doc.Key] = pl.doc
		}
		l.lastMu.Unlock()
		outs[i] = pl.out
	}
	return outs, errs
}

// classify compares the mirror of pl.doc on disk with the directory's
// state, keeps an edited file aside, and decides whether to write.
func (m *Mirror) classify(ds *dirState, pl *plan, restore bool, now time.Time) error {
	doc := pl.doc
	file := doc.Key
	st := ds.Documents[path.Base(file)]
	if st != nil && st.Key != doc.Key {
		st = nil
	}
	cur, err := m.readFile(file)
	if err != nil {
		return err
	}
	want := store.HashBytes(doc.Value)
	var edit *Edit
	switch {
	case cur == nil && st != nil:
		edit = &Edit{Key: doc.Key, Kind: "deleted", Rev: st.Rev}
	case cur == nil:
	default:
		h := store.HashBytes(cur)
		if rev, ok := st.holds(h); ok {
			if rev > doc.Revision || (rev == doc.Revision && h == want) {
				pl.out.Rev, pl.out.Action = rev, Current
				return nil
			}
			break
		}
		if h == want {
			// The file already holds this value (a copy made by
			// hand, a mirror whose state was lost): adopt it.
			break
		}
		kind, rev := "edited", uint64(0)
		if st == nil {
			kind = "unmirrored"
		} else {
			rev = st.Rev
		}
		edit = &Edit{Key: doc.Key, Kind: kind, Rev: rev}
	}
	if restore && edit == nil && st != nil && st.Rev > doc.Revision {
		pl.out.Action = Current
		return nil
	}
	if edit != nil {
		edit.At = now
		if edit.Kind != "deleted" {
			kept, err := m.moveAside(file, now)
			if err != nil {
				return err
			}
			edit.KeptAs = kept
		}
	}
	pl.edit, pl.write = edit, true
	return nil
}

// commitDir writes the directory's state file, renames the staged
// contents over their mirrors and fsyncs the directory; failures are set
// on the plans. The state file names the new contents before they replace
// the mirrors, and keeps the previous writes' hashes: a crash between the
// renames leaves mirrors the state file still recognises (at their older
// revision), never ones that look edited. One directory fsync makes every
// rename durable.
func (m *Mirror) commitDir(dir string, ds *dirState, plans []*plan) {
	fail := func(err error) {
		for _, pl := range plans {
			if pl.staged != nil {
				pl.staged.Abort()
				pl.staged = nil
			}
			if pl.err == nil && pl.write {
				pl.err = err
			}
		}
	}
	sb, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		fail(err)
		return
	}
	state, err := atomicfile.Stage(m.root, statePath(dir), append(sb, '\n'), 0o644)
	if err != nil {
		fail(err)
		return
	}
	if err := state.Commit(); err != nil {
		fail(err)
		return
	}
	for _, pl := range plans {
		if pl.staged != nil && pl.err == nil {
			pl.err = pl.staged.Commit()
		}
	}
	if err := atomicfile.SyncDir(m.root, dir); err != nil {
		for _, pl := range plans {
			if pl.err == nil && pl.write {
				pl.err = err
			}
		}
	}
}

// moveAside renames a hand-edited mirror to <file>.direct-edit-<time>,
// never over an existing file.
func (m *Mirror) moveAside(name string, now time.Time) (string, error) {
	base := name + ".direct-edit-" + now.Format("20060102T150405.000000000Z")
	dst := base
	for i := 1; ; i++ {
		if _, err := m.root.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = base + "-" + strconv.Itoa(i)
	}
	if err := m.root.Rename(name, dst); err != nil {
		return "", fmt.Errorf("mirror: keep the edited %s aside: %w", name, err)
	}
	if err := atomicfile.SyncDir(m.root, path.Dir(name)); err != nil {
		return "", err
	}
	return dst, nil
}

// report logs an edit, writes its escalation notice and calls OnEdit.
func (m *Mirror) report(e *Edit) {
	if !m.opts.NoNotice {
		if n, err := m.writeNotice(e); err != nil {
			m.opts.Logger.Warn("mirror: could not write the escalation notice of a direct edit", "document", e.Key, "error", err)
		} else {
			e.Notice = n
		}
	}
	args := []any{"document", e.Key, "kind", e.Kind}
	if e.KeptAs != "" {
		args = append(args, "kept_as", e.KeptAs)
	}
	if e.Notice != "" {
		args = append(args, "notice", e.Notice)
	}
	msg := "mirror: a read-only mirror was edited by hand: the edited file is kept aside and the mirror restored from the store (change the document through custodian)"
	switch e.Kind {
	case "deleted":
		msg = "mirror: a read-only mirror was deleted by hand: restored from the store"
	case "unmirrored":
		msg = "mirror: a file with other content was where the mirror goes: kept aside and the mirror written from the store"
	}
	m.opts.Logger.Warn(msg, args...)
	if m.opts.OnEdit != nil {
		m.opts.OnEdit(*e)
	}
}

// NoticeDir is where direct-edit notices are written (the ASDD
// escalations directory).
const NoticeDir = ".asdd/escalations"

func (m *Mirror) writeNotice(e *Edit) (string, error) {
	name := NoticeDir + "/direct-edit-" + e.At.Format("20060102T150405.000000000Z") + "-" + strings.NewReplacer("/", "_", ".", "_").Replace(e.Key) + ".md"
	var b strings.Builder
	fmt.Fprintf(&b, "# Direct %s of a mirrored document — %s\n\n", map[string]string{"edited": "edit", "deleted": "deletion", "unmirrored": "file in place"}[e.Kind], e.Key)
	fmt.Fprintf(&b, "- Status: OPEN\n- Found: %s\n- Document: %s\n", e.At.Format(time.RFC3339Nano), e.Key)
	if e.Rev > 0 {
		fmt.Fprintf(&b, "- Mirror revision before the edit: %d\n", e.Rev)
	}
	if e.KeptAs != "" {
		fmt.Fprintf(&b, "- The edited file was kept as: %s\n", e.KeptAs)
	}
	if m.opts.Source != "" {
		fmt.Fprintf(&b, "- Store: %s\n", m.opts.Source)
	}
	b.WriteString("\nThe document lives in the store; the file at its path is a read-only mirror,\n" +
		"rewritten from the store. The mirror was restored; nothing was adopted.\n" +
		"To keep the change, make it through custodian (the command of that document,\n" +
		"`custodian apply`, or a compare-and-swap PUT), then delete this notice.\n")
	if err := m.root.MkdirAll(NoticeDir, 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Write(m.root, name, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return name, nil
}

func (m *Mirror) readFile(name string) ([]byte, error) {
	b, err := m.root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mirror: read %s: %w", name, err)
	}
	return b, nil
}

// readDirState returns the state file of a directory's mirrors; an empty
// one when there is none or it does not parse (then nothing on disk is
// recognised as written by a mirror: a file in place is kept aside before
// the mirror is written).
func (m *Mirror) readDirState(dir string) (*dirState, error) {
	ds := &dirState{Documents: map[string]*State{}}
	b, err := m.readFile(statePath(dir))
	if err != nil || b == nil {
		return ds, err
	}
	var got dirState
	if json.Unmarshal(b, &got) != nil || got.Documents == nil {
		return ds, nil
	}
	return &got, nil
}

// RemoveStaleTemps removes the temporary files of mirror writes by
// processes that no longer run (a daemon killed mid-write) beside the
// mirror of key. They were never the mirror.
func (m *Mirror) RemoveStaleTemps(key string) {
	p := pathsFor(key)
	entries, err := fs.ReadDir(m.root.FS(), p.dir)
	if err != nil {
		return
	}
	for _, base := range []string{path.Base(p.file), path.Base(p.state)} {
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Name(), base+".tmp-")
			if !ok {
				continue
			}
			pidStr, _, _ := strings.Cut(rest, "-")
			pid, err := strconv.Atoi(pidStr)
			if err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
				continue
			}
			_ = m.root.Remove(path.Join(p.dir, e.Name()))
		}
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Forget removes key's entry from its directory's state file, and the
// state and lock files when no entry is left: the file at key is no longer
// a mirror (custodian migrate --to file made it the document itself).
func Forget(dir, key string) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	m, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	defer m.Close()
	p := pathsFor(key)
	if _, err := m.root.Stat(p.state); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l, err := m.lock(p.dir)
	if err != nil {
		return err
	}
	ds, err := m.readDirState(p.dir)
	if err != nil {
		l.unlock()
		return err
	}
	delete(ds.Documents, path.Base(key))
	if len(ds.Documents) > 0 {
		sb, err := json.MarshalIndent(ds, "", "  ")
		if err == nil {
			err = atomicfile.Write(m.root, p.state, append(sb, '\n'), 0o644)
		}
		l.unlock()
		return err
	}
	err = m.root.Remove(p.state)
	l.unlock()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mirror: remove %s: %w", p.state, err)
	}
	if err := m.root.Remove(lockPath(p.dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mirror: remove %s: %w", lockPath(p.dir), err)
	}
	return nil
}
