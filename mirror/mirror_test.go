package mirror

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/store"
)

func doc(key string, rev uint64, status string) store.Document {
	v := fmt.Sprintf("{\n  \"tasks\": [\n    {\n      \"id\": \"1.1\",\n      \"status\": %q\n    }\n  ],\n  \"n\": %d\n}\n", status, rev)
	return store.Document{Key: key, Revision: rev, Value: json.RawMessage(v)}
}

type edits struct {
	mu   sync.Mutex
	list []Edit
}

func (e *edits) add(x Edit) { e.mu.Lock(); e.list = append(e.list, x); e.mu.Unlock() }

func (e *edits) all() []Edit { e.mu.Lock(); defer e.mu.Unlock(); return append([]Edit(nil), e.list...) }

func open(t testing.TB, dir string, ed *edits) *Mirror {
	t.Helper()
	opts := Options{Source: "etcd://127.0.0.1:2379/test/", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if ed != nil {
		opts.OnEdit = ed.add
	}
	m, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func read(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, m *Mirror, d store.Document, want Action) Outcome {
	t.Helper()
	o, err := m.Write(d)
	if err != nil {
		t.Fatal(err)
	}
	if o.Action != want {
		t.Fatalf("write %s rev %d: %s, want %s", d.Key, d.Revision, o.Action, want)
	}
	return o
}

// A mirror holds the bytes of the revision written, at the document's
// path; its state file names that revision and the bytes' hash; a version
// older than the mirror's never goes over it.
func TestWriteKeepsTheLatestRevision(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, nil)
	for _, key := range []string{".asdd/state/manifest.json", ".impl/manifest.json", ".agents/tmp/state.json", ".workflow/.cycle/c-1.json"} {
		mustWrite(t, m, doc(key, 1, "pending"), Written)
		mustWrite(t, m, doc(key, 1, "pending"), Current)
		d3 := doc(key, 3, "in_progress")
		mustWrite(t, m, d3, Written)
		mustWrite(t, m, doc(key, 2, "pending"), Current) // a stale read
		if got := read(t, dir, key); !bytes.Equal(got, d3.Value) {
			t.Fatalf("%s holds %s, want revision 3's bytes", key, got)
		}
		sf := read(t, dir, StatePath(key))
		st, err := ReadStateFile(sf, key)
		if err != nil {
			t.Fatal(err)
		}
		if st.Key != key || st.Rev != 3 || st.File != store.HashBytes(d3.Value) || !bytes.Contains(sf, []byte(`"store": "etcd://127.0.0.1:2379/test/"`)) ||
			len(st.Recent) != 1 || st.Recent[0].Rev != 1 || st.Written.IsZero() {
			t.Fatalf("state of %s: %+v", key, st)
		}
		s, err := Read(dir, key)
		if err != nil || s.State != "ok" || s.Rev != 3 {
			t.Fatalf("Read %s: %+v %v", key, s, err)
		}
	}
	if got := StatePath(".asdd/state/manifest.json"); got != ".asdd/state/.mirror" {
		t.Fatalf("manifest state file %s", got)
	}
	if got := StatePath(".agents/tmp/state.json"); got != ".agents/tmp/.mirror" {
		t.Fatalf("agent state's state file %s", got)
	}
	// Same revision, other bytes (a store rebuilt under the same prefix):
	// the store's bytes win.
	other := doc(".impl/manifest.json", 3, "failed")
	mustWrite(t, m, other, Written)
	if !bytes.Equal(read(t, dir, ".impl/manifest.json"), other.Value) {
		t.Fatal("same revision with other bytes not written")
	}
}

// A mirror edited by hand is never adopted and never lost: the edited file
// is kept aside, the mirror written again, and the edit reported (outcome,
// OnEdit, log, an escalation notice). A deleted mirror is written again and
// reported.
func TestDirectEditKeptAsideAndRestored(t *testing.T) {
	dir := t.TempDir()
	var ed edits
	var logBuf bytes.Buffer
	m, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil)), OnEdit: ed.add,
		Now: func() time.Time { return time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	key := ".impl/manifest.json"
	d1 := doc(key, 1, "pending")
	mustWrite(t, m, d1, Written)
	edited := []byte(`{"tasks":[{"id":"1.1","status":"merged"}]}`)
	if err := os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, _ := Read(dir, key); s.State != "edited" {
		t.Fatalf("Read of an edited mirror: %+v", s)
	}
	o, err := m.Restore(key)
	if err != nil {
		t.Fatal(err)
	}
	if o.Action != Restored || o.Edit == nil || o.Edit.Kind != "edited" || o.Edit.Rev != 1 {
		t.Fatalf("restore: %+v", o)
	}
	kept := ".impl/manifest.json.direct-edit-20261125T180000.000000000Z"
	if o.Edit.KeptAs != kept || !bytes.Equal(read(t, dir, kept), edited) {
		t.Fatalf("edited file kept as %q", o.Edit.KeptAs)
	}
	if !bytes.Equal(read(t, dir, key), d1.Value) {
		t.Fatal("mirror not restored")
	}
	notice := string(read(t, dir, o.Edit.Notice))
	if !strings.HasPrefix(o.Edit.Notice, ".asdd/escalations/") || !strings.Contains(notice, kept) || !strings.Contains(notice, "Mirror revision before the edit: 1") {
		t.Fatalf("notice %s:\n%s", o.Edit.Notice, notice)
	}
	if !strings.Contains(logBuf.String(), "edited by hand") || !strings.Contains(logBuf.String(), kept) {
		t.Fatalf("log:\n%s", logBuf.String())
	}
	// A second edit at the same instant is kept beside the first, not over it.
	if err := os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = m.Write(doc(key, 2, "in_progress"))
	if err != nil || o.Action != Restored || o.Edit.KeptAs != kept+"-1" || string(read(t, dir, kept+"-1")) != "not json" {
		t.Fatalf("second edit: %+v %v", o, err)
	}
	if err := os.Remove(filepath.Join(dir, ".impl", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	o, err = m.Restore(key)
	if err != nil || o.Action != Restored || o.Edit.Kind != "deleted" || o.Rev != 2 {
		t.Fatalf("deleted: %+v %v", o, err)
	}
	if len(ed.all()) != 3 {
		t.Fatalf("OnEdit called %d times, want 3", len(ed.all()))
	}
	// Nothing to restore: nothing reported.
	if o, err := m.Restore(key); err != nil || o.Action != Current {
		t.Fatalf("intact mirror: %+v %v", o, err)
	}
}

// A file already at a document's path before its first mirror (a copy of
// the project made by hand, a file store left behind) is kept aside unless
// it holds the store's bytes, which are then adopted as the mirror.
func TestFileInPlaceBeforeTheFirstMirror(t *testing.T) {
	dir := t.TempDir()
	key := ".agents/tmp/state.json"
	d := doc(key, 4, "pending")
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".agents", "tmp", "state.json")
	if err := os.WriteFile(p, d.Value, 0o644); err != nil {
		t.Fatal(err)
	}
	var ed edits
	m := open(t, dir, &ed)
	if s, _ := Read(dir, key); s.State != "untracked" {
		t.Fatalf("a file with no state file: %+v", s)
	}
	o := mustWrite(t, m, d, Written)
	if o.Edit != nil || len(ed.all()) != 0 {
		t.Fatalf("identical file reported: %+v", o)
	}
	dir2 := t.TempDir()
	os.MkdirAll(filepath.Join(dir2, ".agents", "tmp"), 0o755)
	os.WriteFile(filepath.Join(dir2, ".agents", "tmp", "state.json"), []byte(`{"old":true}`), 0o644)
	m2 := open(t, dir2, &ed)
	o = mustWrite(t, m2, d, Restored)
	if o.Edit.Kind != "unmirrored" || string(read(t, dir2, o.Edit.KeptAs)) != `{"old":true}` {
		t.Fatalf("file in place: %+v", o.Edit)
	}
}

// A crash between the state file's rename and the mirror's leaves a state
// file naming a revision the mirror does not hold yet: the mirror is still
// recognised (at its older revision), never taken for a direct edit.
func TestCrashBetweenTheTwoRenames(t *testing.T) {
	dir := t.TempDir()
	var ed edits
	m := open(t, dir, &ed)
	key := ".asdd/state/manifest.json"
	d1, d2 := doc(key, 1, "pending"), doc(key, 2, "in_progress")
	mustWrite(t, m, d1, Written)
	mustWrite(t, m, d2, Written)
	// Put revision 1's bytes back under revision 2's state file.
	if err := os.WriteFile(filepath.Join(dir, ".asdd", "state", "manifest.json"), d1.Value, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, _ := Read(dir, key); s.State != "ok" || s.Rev != 1 {
		t.Fatalf("after the crash: %+v", s)
	}
	m2 := open(t, dir, &ed)
	mustWrite(t, m2, d2, Written)
	if len(ed.all()) != 0 {
		t.Fatalf("a crash taken for a direct edit: %+v", ed.all())
	}
}

// Several writers (goroutines of two Mirrors, standing for two processes)
// write increasing revisions of one document while a reader reads the
// mirror in a loop: the reader only ever sees a whole version, the mirror
// ends at the highest revision, and no write is taken for a direct edit.
func TestConcurrentWritersNeverTear(t *testing.T) {
	dir := t.TempDir()
	var ed edits
	ms := []*Mirror{open(t, dir, &ed), open(t, dir, &ed)}
	key := ".impl/manifest.json"
	const n = 60
	valid := map[string]bool{}
	for r := uint64(1); r <= n; r++ {
		valid[string(doc(key, r, "s").Value)] = true
	}
	stop := make(chan struct{})
	var torn []string
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		p := filepath.Join(dir, ".impl", "manifest.json")
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(p)
			if err == nil && !valid[string(b)] {
				torn = append(torn, string(b))
			}
			if s, err := Read(dir, key); err == nil && s.State == "edited" {
				torn = append(torn, "Read says edited")
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := uint64(1 + w%2); r <= n; r += 2 {
				if _, err := ms[w%2].Write(doc(key, r, "s")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	if len(torn) > 0 {
		t.Fatalf("reader saw %d torn or foreign versions, first %q", len(torn), torn[0])
	}
	if s, _ := Read(dir, key); s.State != "ok" || s.Rev != n {
		t.Fatalf("final mirror %+v, want revision %d", s, n)
	}
	if len(ed.all()) != 0 {
		t.Fatalf("concurrent writes reported as edits: %+v", ed.all())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".impl", "*.tmp-*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// Temporary files of a writer that died mid-write are removed; a live
// writer's are not.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, nil)
	os.MkdirAll(filepath.Join(dir, ".impl"), 0o755)
	dead := filepath.Join(dir, ".impl", "manifest.json.tmp-999999999-1-1")
	deadState := filepath.Join(dir, ".impl", ".mirror.tmp-999999999-2-1")
	mine := filepath.Join(dir, ".impl", fmt.Sprintf("manifest.json.tmp-%d-3-1", os.Getpid()))
	other := filepath.Join(dir, ".impl", "notes.json.tmp-999999999-1-1")
	for _, p := range []string{dead, deadState, mine, other} {
		os.WriteFile(p, []byte("{"), 0o644)
	}
	m.RemoveStaleTemps(".impl/manifest.json")
	for p, want := range map[string]bool{dead: false, deadState: false, mine: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// A key that leaves the project, or a directory that is a symlink out of
// it, writes nothing outside.
func TestMirrorStaysInTheProject(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	m := open(t, dir, nil)
	if _, err := m.Write(store.Document{Key: "../x.json", Revision: 1, Value: []byte("{}")}); err == nil {
		t.Fatal("key outside the project accepted")
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".impl")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(doc(".impl/manifest.json", 1, "x")); err == nil {
		t.Fatal("write through a symlink out of the project accepted")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the project: %v", ents)
	}
}

// A document with no value (never committed) is not mirrored.
func TestNoValueNoMirror(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, nil)
	if o, err := m.Write(store.Document{Key: ".impl/manifest.json"}); err != nil || o.Action != Current {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".impl")); err == nil {
		t.Fatal("directory made for nothing")
	}
	if s, _ := Read(dir, ".impl/manifest.json"); s.State != "missing" {
		t.Fatalf("%+v", s)
	}
}

// The mirrors of one directory share its state file: a batch writes them
// with one state file write; each keeps its own revision, an edit of one
// is found without disturbing the others, and Forget drops one entry (the
// file itself when none is left).
func TestOneStateFilePerDirectory(t *testing.T) {
	dir := t.TempDir()
	var ed edits
	m := open(t, dir, &ed)
	a, b := ".workflow/.cycle/a.json", ".workflow/.cycle/b.json"
	outs, errs := m.WriteBatch([]store.Document{doc(a, 1, "x"), doc(b, 5, "y"), doc(".impl/manifest.json", 2, "z")})
	for i, o := range outs {
		if errs[i] != nil || o.Action != Written {
			t.Fatalf("batch %d: %+v %v", i, o, errs[i])
		}
	}
	mustWrite(t, m, doc(a, 2, "x2"), Written)
	for key, rev := range map[string]uint64{a: 2, b: 5} {
		if s, _ := Read(dir, key); s.State != "ok" || s.Rev != rev {
			t.Fatalf("%s: %+v", key, s)
		}
	}
	if StatePath(a) != StatePath(b) || StatePath(a) != ".workflow/.cycle/.mirror" {
		t.Fatalf("state files %s %s", StatePath(a), StatePath(b))
	}
	if err := os.WriteFile(filepath.Join(dir, ".workflow", ".cycle", "b.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, errs = m.WriteBatch([]store.Document{doc(a, 2, "x2"), doc(b, 5, "y")})
	if errs[0] != nil || errs[1] != nil || outs[0].Action != Current || outs[1].Action != Restored || len(ed.all()) != 1 {
		t.Fatalf("edit of b: %+v %v", outs, errs)
	}
	if err := Forget(dir, a); err != nil {
		t.Fatal(err)
	}
	if s, _ := Read(dir, a); s.State != "untracked" {
		t.Fatalf("forgotten a: %+v", s)
	}
	if s, _ := Read(dir, b); s.State != "ok" || s.Rev != 5 {
		t.Fatalf("b after forgetting a: %+v", s)
	}
	if err := Forget(dir, b); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".workflow", ".cycle", ".mirror")); err == nil {
		t.Fatal("empty state file left")
	}
}
