package file_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// Issue 18 item 7: history lost or rewritten is never taken silently.

// dropLastRecord cuts the journal's last line, as a lost write would.
func dropLastRecord(t *testing.T, dir string) {
	t.Helper()
	j := path(dir, "journal.ndjson")
	b := must(os.ReadFile(j))
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines = lines[:len(lines)-2] // the last line and the empty tail
	if err := os.WriteFile(j, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

func snapshotFiles(t *testing.T, dir string) (snap, journal []byte) {
	t.Helper()
	return must(os.ReadFile(path(dir, "manifest.json"))), must(os.ReadFile(path(dir, "journal.ndjson")))
}

func TestSnapshotNewerThanJournalIsCorrupt(t *testing.T) {
	dir, want := commitN(t, 3)
	dropLastRecord(t, dir)
	snap, journal := snapshotFiles(t, dir)

	s := open(t, dir, file.Options{})
	_, err := s.Get(ctx, key)
	if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "revision 3 was committed") || !strings.Contains(err.Error(), "custodian repair") {
		t.Fatalf("Get: %v, want CORRUPT_STATE naming the lost revision and the repair command", err)
	}
	if _, err := s.Update(ctx, key, setN(9)); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("Update: %v, want CORRUPT_STATE", err)
	}
	if err := s.Verify(ctx, key); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("Verify: %v, want CORRUPT_STATE", err)
	}
	s.Close()
	gotSnap, gotJournal := snapshotFiles(t, dir)
	if !bytes.Equal(gotSnap, snap) || !bytes.Equal(gotJournal, journal) {
		t.Fatal("the snapshot or the journal was changed")
	}

	t.Run("keep snapshot", func(t *testing.T) {
		dir := copyDir(t, dir)
		s := open(t, dir, file.Options{Validate: anyValue})
		res, err := s.Repair(ctx, key, file.KeepSnapshot, "tl", "journal restored from nowhere")
		if err != nil || res.Revision != 3 || !res.Committed {
			t.Fatalf("repair: %+v, %v", res, err)
		}
		doc, err := s.Get(ctx, key)
		if err != nil || sum(t, doc.Value) != sum(t, want) || doc.Revision != 3 {
			t.Fatalf("after repair: rev %d %v", doc.Revision, err)
		}
		if err := s.Verify(ctx, key); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("keep journal", func(t *testing.T) {
		dir := copyDir(t, dir)
		s := open(t, dir, file.Options{})
		res, err := s.Repair(ctx, key, file.KeepJournal, "tl", "the lost commit is abandoned")
		if err != nil || res.Revision != 2 || res.Committed {
			t.Fatalf("repair: %+v, %v", res, err)
		}
		kept := glob(t, dir, "manifest.json.unjournaled-*")
		if len(kept) != 1 || !bytes.Equal(must(os.ReadFile(kept[0])), snap) {
			t.Fatalf("the newer snapshot is not kept aside: %v", kept)
		}
		if err := s.Verify(ctx, key); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMissingJournalIsReported(t *testing.T) {
	dir, want := commitN(t, 3)
	if err := os.Remove(path(dir, "journal.ndjson")); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, file.Options{})
	keys, err := s.Keys(ctx)
	if err != nil || len(keys) != 1 || keys[0] != key {
		t.Fatalf("Keys: %v %v, want the document whose journal is gone", keys, err)
	}
	if err := s.Verify(ctx, key); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Verify: %v", err)
	}
	if _, err := s.Get(ctx, key); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("Get: %v", err)
	}
	s.Close()
	s = open(t, dir, file.Options{Validate: anyValue})
	res, err := s.Repair(ctx, key, file.KeepSnapshot, "tl", "journal lost with the laptop")
	if err != nil || res.Revision != 1 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil || sum(t, doc.Value) != sum(t, want) {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// resealJournal rewrites the journal with edit applied to each record and
// every hash recomputed (an attacker without the key).
func resealJournal(t *testing.T, dir string, edit func(r *store.Record)) {
	t.Helper()
	j := path(dir, "journal.ndjson")
	var out []byte
	prev := ""
	for _, line := range bytes.Split(bytes.TrimSpace(must(os.ReadFile(j))), []byte("\n")) {
		r, err := store.DecodeRecord(line)
		if err != nil {
			t.Fatal(err)
		}
		edit(&r)
		b, err := r.Seal(prev)
		if err != nil {
			t.Fatal(err)
		}
		out, prev = append(out, b...), r.Hash
	}
	if err := os.WriteFile(j, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRewrittenHistoryIsDetected(t *testing.T) {
	forge := func(r *store.Record) {
		if r.Rev == 2 {
			r.Actor = "someone-else"
		}
	}
	t.Run("anchor", func(t *testing.T) {
		dir, _ := commitN(t, 3)
		resealJournal(t, dir, forge)
		s := open(t, dir, file.Options{})
		if err := s.Verify(ctx, key); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "rewritten") {
			t.Fatalf("Verify: %v", err)
		}
		if _, err := s.Get(ctx, key); reason.CodeOf(err) != reason.CorruptState {
			t.Fatalf("Get: %v", err)
		}
	})
	t.Run("anchor rewritten too, with a key", func(t *testing.T) {
		k := []byte("0123456789abcdef0123456789abcdef")
		dir := t.TempDir()
		s := open(t, dir, file.Options{JournalKey: k})
		for i := 1; i <= 3; i++ {
			if _, err := s.Update(ctx, key, setN(i), store.Create()); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := s.VerifyDocument(ctx, key)
		if err != nil || !rep.Authenticated || rep.Anchored != 3 {
			t.Fatalf("verify with the key: %+v %v", rep, err)
		}
		s.Close()
		resealJournal(t, dir, func(r *store.Record) { forge(r); r.MAC = "" })
		// The attacker rewrites the anchor to the forged head.
		recs := bytes.Split(bytes.TrimSpace(must(os.ReadFile(path(dir, "journal.ndjson")))), []byte("\n"))
		last, _ := store.DecodeRecord(recs[len(recs)-1])
		a, _ := json.Marshal(map[string]any{"rev": last.Rev, "hash": last.Hash})
		os.WriteFile(path(dir, ".head"), append(a, '\n'), 0o644)

		s = open(t, dir, file.Options{JournalKey: k})
		if err := s.Verify(ctx, key); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "not authenticated") {
			t.Fatalf("Verify: %v", err)
		}
		if _, err := s.Get(ctx, key); reason.CodeOf(err) != reason.CorruptState {
			t.Fatalf("Get: %v", err)
		}
		// Without the key the forgery is consistent: that is the limit
		// docs/store.md states.
		s = open(t, dir, file.Options{JournalKey: nil})
		if err := s.Verify(ctx, key); err != nil {
			t.Fatalf("without the key: %v", err)
		}
	})
	t.Run("a record appended without the key", func(t *testing.T) {
		k := []byte("0123456789abcdef0123456789abcdef")
		dir := t.TempDir()
		s := open(t, dir, file.Options{JournalKey: k})
		for i := 1; i <= 2; i++ {
			if _, err := s.Update(ctx, key, setN(i), store.Create()); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		head := must(os.ReadFile(path(dir, ".head")))
		s = open(t, dir, file.Options{JournalKey: []byte{}}) // a store without the key
		if _, err := s.Update(ctx, key, setN(3)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		os.WriteFile(path(dir, ".head"), head, 0o644) // the anchor it cannot forge
		s = open(t, dir, file.Options{JournalKey: k})
		if _, err := s.Get(ctx, key); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "MAC") {
			t.Fatalf("Get: %v", err)
		}
	})
}

// Issue 18 item 11: verify recognises what an ordinary crash leaves.

func TestVerifyRecognisesCrashStates(t *testing.T) {
	t.Run("snapshot one commit behind with a leftover tmp", func(t *testing.T) {
		dir, _ := commitN(t, 2)
		old := must(os.ReadFile(path(dir, "manifest.json")))
		s := open(t, dir, file.Options{})
		res, err := s.Update(ctx, key, setN(3))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		// The crash image: journal fsynced, .tmp written (partly), rename
		// not done.
		newSnap := must(os.ReadFile(path(dir, "manifest.json")))
		os.WriteFile(path(dir, "manifest.json"), old, 0o644)
		os.WriteFile(path(dir, "manifest.json.tmp"), newSnap[:len(newSnap)/2], 0o644)
		s = open(t, dir, file.Options{})
		rep, err := s.VerifyDocument(ctx, key)
		if err != nil || len(rep.Recovery) != 1 || !strings.Contains(rep.Recovery[0], "replays 1 record") || !strings.Contains(rep.Recovery[0], "manifest.json.tmp") {
			t.Fatalf("verify: %+v %v", rep, err)
		}
		if !bytes.Equal(must(os.ReadFile(path(dir, "manifest.json"))), old) {
			t.Fatal("verify changed the snapshot")
		}
		s.Close()
		doc, err := reopen(t, dir)
		if err != nil || doc.Revision != 3 || sum(t, doc.Value) != sum(t, res.Value) {
			t.Fatalf("recovery: rev %d %v", doc.Revision, err)
		}
	})
	t.Run("empty journal from a crash in the first commit", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(path(dir, ""), 0o755)
		os.WriteFile(path(dir, "journal.ndjson"), nil, 0o644)
		s := open(t, dir, file.Options{})
		rep, err := s.VerifyDocument(ctx, key)
		if err != nil || len(rep.Recovery) != 1 || !strings.Contains(rep.Recovery[0], "first commit") {
			t.Fatalf("verify: %+v %v", rep, err)
		}
		if _, err := s.Update(ctx, key, setN(1), store.Create()); err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(ctx, key); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("torn tail", func(t *testing.T) {
		dir, _ := commitN(t, 2)
		f, _ := os.OpenFile(path(dir, "journal.ndjson"), os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"rev":3,"time":`)
		f.Close()
		s := open(t, dir, file.Options{})
		rep, err := s.VerifyDocument(ctx, key)
		if err != nil || len(rep.Recovery) != 1 || !strings.Contains(rep.Recovery[0], "torn") {
			t.Fatalf("verify: %+v %v", rep, err)
		}
	})
}

// Issue 18 item 12: a FIFO, a socket or a directory where a state file
// belongs is refused at once, never waited on.

func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
		return nil
	}
}

func TestNonRegularStateFilesAreRefused(t *testing.T) {
	for _, name := range []string{"journal.ndjson", "manifest.json", "manifest.json.tmp", ".lock", ".head"} {
		for _, kind := range []string{"fifo", "dir"} {
			t.Run(name+" "+kind, func(t *testing.T) {
				dir, _ := commitN(t, 2)
				p := path(dir, name)
				os.Remove(p)
				var err error
				if kind == "fifo" {
					err = syscall.Mkfifo(p, 0o644)
				} else {
					err = os.Mkdir(p, 0o755)
				}
				if err != nil {
					t.Fatal(err)
				}
				s := open(t, dir, file.Options{})
				err = within(t, 2*time.Second, func() error { _, err := s.Get(ctx, key); return err })
				if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), name) {
					t.Fatalf("Get: %v, want CORRUPT_STATE naming %s", err, name)
				}
				err = within(t, 2*time.Second, func() error { return s.Verify(ctx, key) })
				if err == nil {
					t.Fatal("verify passed")
				}
				if name == "journal.ndjson" {
					keys, _ := s.Keys(ctx)
					if len(keys) != 1 {
						t.Fatalf("Keys: %v, want the document whose journal is not a file", keys)
					}
				}
			})
		}
	}
}

// Issue 16 (contract gaps): a full disk does not stop reads.
func TestReadsWorkWhenTheSnapshotCannotBeWritten(t *testing.T) {
	dir, want := commitN(t, 3)
	os.Remove(path(dir, "manifest.json"))
	full := func(point string) error {
		if strings.HasPrefix(point, "snapshot.") || strings.HasPrefix(point, "marks.") {
			return syscall.ENOSPC
		}
		return nil
	}
	s := open(t, dir, file.Options{Fault: full})
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 3 || sum(t, doc.Value) != sum(t, want) {
		t.Fatalf("Get on a full disk: %v", err)
	}
	if _, err := s.History(ctx, key, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, key, setN(4)); err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Update on a full disk: %v, want refused naming ENOSPC", err)
	}
}

// Issue 21 item 4 / issue 19 item 12: direct edits.

type editLog struct {
	mu  sync.Mutex
	evs []file.DirectEdit
}

func (l *editLog) add(e file.DirectEdit) { l.mu.Lock(); l.evs = append(l.evs, e); l.mu.Unlock() }
func (l *editLog) wait(t *testing.T, n int) []file.DirectEdit {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		evs := append([]file.DirectEdit(nil), l.evs...)
		l.mu.Unlock()
		if len(evs) >= n || time.Now().After(deadline) {
			if len(evs) < n {
				t.Fatalf("%d direct edits reported, want %d", len(evs), n)
			}
			return evs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// onlyN accepts values whose n is below 100.
func onlyN(key string, prev, next []byte) error {
	var m map[string]any
	if err := json.Unmarshal(next, &m); err != nil {
		return err
	}
	if n, _ := m["n"].(float64); n >= 100 {
		return reason.New(reason.InvalidInput, "n must stay below 100")
	}
	return nil
}

func TestDirectEdits(t *testing.T) {
	for _, hold := range []bool{false, true} {
		mode := "direct"
		if hold {
			mode = "serve"
		}
		t.Run(mode+" adopt", func(t *testing.T) {
			dir, _ := commitN(t, 3)
			var log editLog
			s := open(t, dir, file.Options{Hold: hold, DirectEdits: file.DirectEditAdopt, Validate: onlyN, OnDirectEdit: log.add})
			if _, err := s.Get(ctx, key); err != nil {
				t.Fatal(err)
			}
			want := editFile(t, dir, func(m map[string]any) { m["n"], m["by"] = 42, "hand" })
			if !hold {
				s.Close()
				s = open(t, dir, file.Options{DirectEdits: file.DirectEditAdopt, Validate: onlyN, OnDirectEdit: log.add})
				if _, err := s.Get(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			ev := log.wait(t, 1)[0]
			if !ev.Adopted || ev.Revision != 4 || ev.Aside != "" || len(ev.Patch) == 0 {
				t.Fatalf("event: %+v", ev)
			}
			doc, err := s.Get(ctx, key)
			if err != nil || doc.Revision != 4 || sum(t, doc.Value) != sum(t, want) {
				t.Fatalf("after adoption: rev %d %s %v", doc.Revision, doc.Value, err)
			}
			recs, _ := s.History(ctx, key, 4, 4)
			if len(recs) != 1 || recs[0].Actor != file.DirectEditActor {
				t.Fatalf("history: %+v", recs)
			}
			s.Close()
			if len(glob(t, dir, "manifest.json.unjournaled-*")) != 0 {
				t.Fatal("an adopted edit was left aside")
			}
			doc, err = reopen(t, dir)
			if err != nil || doc.Revision != 4 {
				t.Fatalf("reopen: %d %v", doc.Revision, err)
			}
		})
		t.Run(mode+" reject", func(t *testing.T) {
			dir, want := commitN(t, 3)
			var log editLog
			opts := file.Options{Hold: hold, DirectEdits: file.DirectEditAdopt, Validate: onlyN, OnDirectEdit: log.add}
			s := open(t, dir, opts)
			if _, err := s.Get(ctx, key); err != nil {
				t.Fatal(err)
			}
			edit := editFile(t, dir, func(m map[string]any) { m["n"] = 500 })
			if !hold {
				s.Close()
				opts.Hold = false
				s = open(t, dir, opts)
				if _, err := s.Get(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			ev := log.wait(t, 1)[0]
			if ev.Adopted || ev.Revision != 3 || ev.Code != string(reason.InvalidInput) || !strings.Contains(ev.Reason, "below 100") {
				t.Fatalf("event: %+v", ev)
			}
			if !bytes.Equal(must(os.ReadFile(dir+"/"+ev.Aside)), edit) {
				t.Fatal("the rejected edit is not kept aside")
			}
			doc, err := s.Get(ctx, key)
			if err != nil || doc.Revision != 3 || sum(t, doc.Value) != sum(t, want) {
				t.Fatalf("after rejection: %d %v", doc.Revision, err)
			}
			// The file on disk is the committed value again.
			deadline := time.Now().Add(3 * time.Second)
			for {
				b, err := os.ReadFile(path(dir, "manifest.json"))
				if err == nil && sum(t, b) == sum(t, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("snapshot not restored: %s %v", b, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	t.Run("reject policy", func(t *testing.T) {
		dir, want := commitN(t, 2)
		os.WriteFile(path(dir, "manifest.json"), []byte(`{"n": 1}`), 0o644)
		var log editLog
		s := open(t, dir, file.Options{OnDirectEdit: log.add})
		doc, err := s.Get(ctx, key)
		if err != nil || sum(t, doc.Value) != sum(t, want) {
			t.Fatal(err)
		}
		ev := log.wait(t, 1)[0]
		if ev.Adopted || ev.Policy != file.DirectEditReject || !strings.Contains(ev.Reason, "policy") {
			t.Fatalf("event: %+v", ev)
		}
	})
	t.Run("serve settles an edit on shutdown", func(t *testing.T) {
		dir, _ := commitN(t, 2)
		var log editLog
		s, err := file.Open(dir, file.Options{Hold: true, DirectEdits: file.DirectEditAdopt, Validate: onlyN, OnDirectEdit: log.add})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, key); err != nil {
			t.Fatal(err)
		}
		editFile(t, dir, func(m map[string]any) { m["n"] = 7 })
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		ev := log.wait(t, 1)[0]
		if !ev.Adopted || ev.Revision != 3 {
			t.Fatalf("event: %+v", ev)
		}
	})
}

// editFile edits the test document's snapshot as a script would (read,
// change, write back) and returns what it wrote.
func editFile(t *testing.T, dir string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(must(os.ReadFile(path(dir, "manifest.json"))), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(path(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// copyDir copies a project (regular files only) to a new directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// anyValue accepts every value (the test documents are not manifests).
func anyValue(key string, prev, next []byte) error { return nil }

// Issue 18 item 10: a commit's time is never earlier than its
// predecessor's, whatever the clock says.
func TestRecordTimesNeverGoBack(t *testing.T) {
	for _, hold := range []bool{false, true} {
		dir := t.TempDir()
		var mu sync.Mutex
		clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		now := func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(-time.Hour) // every reading steps back an hour
			return clock
		}
		s := open(t, dir, file.Options{Now: now, Hold: hold, PidFile: ".asdd/state/test.pid"})
		for i := 1; i <= 4; i++ {
			if _, err := s.Update(ctx, key, setN(i), store.Create()); err != nil {
				t.Fatal(err)
			}
		}
		recs, err := s.History(ctx, key, 0, 0)
		if err != nil || len(recs) != 4 {
			t.Fatalf("history: %d %v", len(recs), err)
		}
		for i := 1; i < len(recs); i++ {
			if recs[i].Time.Before(recs[i-1].Time) {
				t.Fatalf("hold=%v: revision %d at %v, before revision %d at %v", hold, recs[i].Rev, recs[i].Time, recs[i-1].Rev, recs[i-1].Time)
			}
		}
	}
}

// Issue 18 item 16: refused or read-only requests leave no directory or
// lock file behind.
func TestRefusedRequestsLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, file.Options{})
	for _, k := range []string{".impl/manifest.json", ".workflow/.cycle/c.json", key} {
		if _, err := s.Update(ctx, k, setN(1)); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("Update %s: %v", k, err)
		}
		if _, err := s.Get(ctx, k); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("Get %s: %v", k, err)
		}
		if _, err := s.History(ctx, k, 0, 0); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("History %s: %v", k, err)
		}
		if err := s.Verify(ctx, k); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("Verify %s: %v", k, err)
		}
	}
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{}, reason.New(reason.InvalidInput, "refused")
	}, store.Create()); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	// A refused create may leave the document's directory and lock (it
	// had to lock to run the rules); nothing else is made.
	if len(left) > 1 || len(left) == 1 && left[0] != ".asdd" {
		t.Fatalf("left behind: %v", left)
	}
}

// An edit of the daemon's snapshot made while commits came in (the file
// held revision 3, the latest is 4): what the edit changes is applied to
// the latest; a member the later commit changed too is a CONFLICT and the
// edit stays aside.
func TestDirectEditRebasedUnderServe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(m map[string]any)
		adopt bool
	}{
		{"disjoint", func(m map[string]any) { m["edited"] = true }, true},
		{"conflicting", func(m map[string]any) { m["n"] = 99 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := commitN(t, 3)
			var log editLog
			s := open(t, dir, file.Options{Hold: true, SnapshotInterval: time.Hour, DirectEdits: file.DirectEditAdopt, Validate: anyValue, OnDirectEdit: log.add})
			if _, err := s.Get(ctx, key); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(ctx, key, setN(4)); err != nil { // the file still holds revision 3
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(must(os.ReadFile(path(dir, "manifest.json"))), &m)
			if m["n"].(float64) != 3 {
				t.Fatalf("the file holds n=%v, want the snapshot of revision 3", m["n"])
			}
			tc.edit(m)
			b, _ := json.Marshal(m)
			os.WriteFile(path(dir, "manifest.json"), b, 0o644)
			ev := log.wait(t, 1)[0]
			doc, err := s.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			json.Unmarshal(doc.Value, &got)
			if tc.adopt {
				if !ev.Adopted || doc.Revision != 5 || got["n"].(float64) != 4 || got["edited"] != true {
					t.Fatalf("event %+v; value %s at %d", ev, doc.Value, doc.Revision)
				}
				return
			}
			if ev.Adopted || ev.Code != string(reason.Conflict) || doc.Revision != 4 || got["n"].(float64) != 4 {
				t.Fatalf("event %+v; value %s at %d", ev, doc.Value, doc.Revision)
			}
		})
	}
}
