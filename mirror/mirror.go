package mirror

import (
	"bytes"
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
// at once (each document's writes are serialised by a lock file).
type Mirror struct {
	root *os.Root
	dir  string
	opts Options

	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu sync.Mutex
	fl *flock.Flock
	// last is the latest version this Mirror wrote or found current: what
	// Restore puts back.
	last *store.Document
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
	return &Mirror{root: r, dir: dir, opts: opts, locks: map[string]*keyLock{}}, nil
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
	m.locks = map[string]*keyLock{}
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

func (m *Mirror) lock(key string) (*keyLock, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	l, ok := m.locks[key]
	if !ok {
		l = &keyLock{}
		m.locks[key] = l
	}
	m.mu.Unlock()
	l.mu.Lock()
	if l.fl == nil {
		p := pathsFor(key)
		if err := m.root.MkdirAll(p.dir, 0o755); err != nil {
			l.mu.Unlock()
			return nil, fmt.Errorf("mirror %s: %w", key, err)
		}
		l.fl = flock.New(m.abs(p.lock))
	}
	if err := l.fl.Lock(); err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("mirror %s: lock %s: %w", key, pathsFor(key).lock, err)
	}
	return l, nil
}

func (l *keyLock) unlock() {
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
	if doc.Value == nil || doc.Revision == 0 {
		return Outcome{Key: doc.Key, Action: Current}, nil
	}
	l, err := m.lock(doc.Key)
	if err != nil {
		return Outcome{}, err
	}
	defer l.unlock()
	out, err := m.write(doc, false, true)
	if err == nil && (l.last == nil || l.last.Revision <= doc.Revision) {
		d := doc
		l.last = &d
	}
	return out, err
}

// WriteBatch is Write of several distinct documents at once: their files
// are written concurrently, and each directory is fsynced once, after all
// of its documents' renames, instead of once per document.
func (m *Mirror) WriteBatch(docs []store.Document) ([]Outcome, []error) {
	outs := make([]Outcome, len(docs))
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	for i, doc := range docs {
		if doc.Value == nil || doc.Revision == 0 {
			outs[i] = Outcome{Key: doc.Key, Action: Current}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.lock(doc.Key)
			if err != nil {
				errs[i] = err
				return
			}
			defer l.unlock()
			outs[i], errs[i] = m.write(doc, false, false)
			if errs[i] == nil && (l.last == nil || l.last.Revision <= doc.Revision) {
				d := doc
				l.last = &d
			}
		}()
	}
	wg.Wait()
	synced := map[string]error{}
	for i, doc := range docs {
		if errs[i] != nil || outs[i].Action == Current {
			continue
		}
		dir := pathsFor(doc.Key).dir
		err, done := synced[dir]
		if !done {
			err = atomicfile.SyncDir(m.root, dir)
			synced[dir] = err
		}
		if err != nil {
			errs[i] = fmt.Errorf("mirror %s: %w", doc.Key, err)
		}
	}
	return outs, errs
}

// Restore checks the mirror of key against the latest version this Mirror
// wrote or found current, and restores it if it was edited or deleted by
// hand. It does nothing for a key this Mirror has not written.
func (m *Mirror) Restore(key string) (Outcome, error) {
	l, err := m.lock(key)
	if err != nil {
		return Outcome{}, err
	}
	defer l.unlock()
	if l.last == nil {
		return Outcome{Key: key, Action: Current}, nil
	}
	return m.write(*l.last, true, true)
}

// Known lists the keys this Mirror has written or found current.
func (m *Mirror) Known() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.locks))
	for k := range m.locks {
		keys = append(keys, k)
	}
	return keys
}

// write does Write's work under the key's lock. With restore, a mirror
// that holds a later revision than doc by its state file is left alone.
// Without syncDir, the caller fsyncs the directory.
func (m *Mirror) write(doc store.Document, restore, syncDir bool) (Outcome, error) {
	p := pathsFor(doc.Key)
	out := Outcome{Key: doc.Key}
	st, err := m.readState(p)
	if err != nil {
		return out, err
	}
	cur, err := m.readFile(p.file)
	if err != nil {
		return out, err
	}
	want := store.HashBytes(doc.Value)
	var edit *Edit
	held := uint64(0)
	switch {
	case cur == nil && st != nil:
		edit = &Edit{Key: doc.Key, Kind: "deleted", Rev: st.Rev}
	case cur == nil:
	default:
		h := store.HashBytes(cur)
		if rev, ok := st.holds(h); ok {
			held = rev
			if held > doc.Revision || (held == doc.Revision && h == want) {
				out.Rev, out.Action = held, Current
				return out, nil
			}
			break
		}
		if h == want {
			// The file already holds this value (a copy made by
			// hand, a mirror whose state file was lost): adopt it.
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
	if restore && st != nil && st.Rev > doc.Revision && edit == nil {
		out.Rev, out.Action = held, Current
		return out, nil
	}
	now := m.opts.Now().UTC()
	if edit != nil {
		edit.At = now
		if edit.Kind != "deleted" {
			kept, err := m.moveAside(p.file, now)
			if err != nil {
				return out, err
			}
			edit.KeptAs = kept
		}
	}
	next := State{Key: doc.Key, Store: m.opts.Source, Rev: doc.Revision, File: want, Written: now}
	if st != nil {
		next.Recent = st.recent()
	}
	sb, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return out, fmt.Errorf("mirror %s: %w", doc.Key, err)
	}
	sb = append(sb, '\n')
	// The state file names the new content before the content replaces
	// the mirror, and keeps the previous writes' hashes: a crash between
	// the two leaves a mirror whose (older) content the state still
	// recognises, never one that looks edited.
	// Both files are staged (written and synced) first, the state file
	// renamed before the mirror, and one directory fsync makes both
	// renames durable.
	content, err := atomicfile.Stage(m.root, p.file, doc.Value, 0o644)
	if err != nil {
		return out, fmt.Errorf("mirror %s: %w", doc.Key, err)
	}
	state, err := atomicfile.Stage(m.root, p.state, sb, 0o644)
	if err != nil {
		content.Abort()
		return out, fmt.Errorf("mirror %s: %w", doc.Key, err)
	}
	if err := state.Commit(); err != nil {
		content.Abort()
		return out, fmt.Errorf("mirror %s: %w", doc.Key, err)
	}
	if err := content.Commit(); err != nil {
		return out, fmt.Errorf("mirror %s: %w", doc.Key, err)
	}
	if syncDir {
		if err := atomicfile.SyncDir(m.root, p.dir); err != nil {
			return out, fmt.Errorf("mirror %s: %w", doc.Key, err)
		}
	}
	out.Rev, out.Action = doc.Revision, Written
	if edit != nil {
		out.Action = Restored
		m.report(edit)
		out.Edit = edit
	}
	return out, nil
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

// readState returns the state file of p, nil when there is none or it
// does not parse (then nothing on disk is recognised as written by a
// mirror: a file in place is kept aside before the mirror is written).
func (m *Mirror) readState(p paths) (*State, error) {
	b, err := m.readFile(p.state)
	if err != nil || b == nil {
		return nil, err
	}
	var st State
	if json.Unmarshal(b, &st) != nil || st.Key != p.key {
		return nil, nil
	}
	return &st, nil
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

// Equal reports whether the mirror file of key holds exactly value.
func (m *Mirror) Equal(key string, value []byte) bool {
	b, err := m.readFile(pathsFor(key).file)
	return err == nil && b != nil && bytes.Equal(b, value)
}
