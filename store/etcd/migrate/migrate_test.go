package migrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
	"github.com/custodian-dev/custodian/store/etcd/migrate"
	"github.com/custodian-dev/custodian/store/file"
)

func TestMain(m *testing.M) {
	code := etcdtest.Main(m)
	testbin.Remove()
	os.Exit(code)
}

// The documents of a small project, named as the seeds name them.
var keys = []string{".agents/tmp/state.json", ".asdd/state/manifest.json", ".impl/manifest.json"}

// fileProject commits a few revisions of each document in a new file store.
func fileProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i, k := range keys {
		for n := range 5 + i*3 {
			_, err := s.Update(ctx, k, func(cur store.Document) (store.Change, error) {
				m := map[string]any{}
				if cur.Value != nil {
					if err := json.Unmarshal(cur.Value, &m); err != nil {
						return store.Change{}, err
					}
				}
				m[fmt.Sprint("f", n%4)] = []any{n, "x"}
				b, err := json.Marshal(m)
				return store.Change{Value: b, Actor: "agent", Reason: fmt.Sprint("step ", n),
					Events: []store.Event{{Type: "step", Data: json.RawMessage(fmt.Sprint(n))}}}, err
			}, store.Create())
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func journalOf(key string) string {
	dir, base := filepath.Split(key)
	if base == "manifest.json" {
		return dir + "journal.ndjson"
	}
	return dir + strings.TrimSuffix(base, ".json") + ".journal.ndjson"
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// file -> etcd -> file gives back the same journal and snapshot files, byte
// for byte, and every step verifies.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := fileProject(t)
	fs, err := file.Open(src, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	es := etcd.New(etcdtest.Client(t), etcd.Options{Prefix: etcdtest.Prefix(t)})
	docs, err := migrate.Copy(ctx, fs, es, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(keys) {
		t.Fatalf("copied %d documents, want %d", len(docs), len(keys))
	}
	for i, d := range docs {
		if d.Key != keys[i] || !d.Verified || d.Records != int(d.Revision) {
			t.Fatalf("document %d: %+v", i, d)
		}
		a, _ := fs.History(ctx, d.Key, 0, 0)
		b, err := es.History(ctx, d.Key, 0, 0)
		if err != nil || len(a) != len(b) || a[len(a)-1].Hash != b[len(b)-1].Hash {
			t.Fatalf("%s: history differs on etcd (%v)", d.Key, err)
		}
	}
	back := t.TempDir()
	if _, err := migrate.Copy(ctx, es, migrate.FileTarget{Root: back}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !bytes.Equal(read(t, src, journalOf(k)), read(t, back, journalOf(k))) {
			t.Errorf("%s: journal differs after the round trip", k)
		}
		if !bytes.Equal(read(t, src, k), read(t, back, k)) {
			t.Errorf("%s: snapshot differs after the round trip", k)
		}
	}
	// The migrated file store takes commits on the same chain.
	bs, err := file.Open(back, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	res, err := bs.Update(ctx, keys[0], func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"after":true}`)}, nil
	})
	if err != nil || res.Revision != docs[0].Revision+1 {
		t.Fatalf("commit after migration: %+v %v", res, err)
	}
}

// Nothing is written when a target document exists or a source document
// does not verify.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	src := fileProject(t)
	fs, err := file.Open(src, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	es := etcd.New(etcdtest.Client(t), etcd.Options{Prefix: etcdtest.Prefix(t)})
	if _, err := migrate.Copy(ctx, fs, es, keys[1:2], nil); err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Copy(ctx, fs, es, nil, nil)
	if reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("copy over an existing document: got %v, want CONFLICT", err)
	}
	if ks, _ := es.Keys(ctx); len(ks) != 1 {
		t.Fatalf("a refused copy wrote documents: %v", ks)
	}
	// Tamper with a source journal: the copy refuses before writing.
	j := filepath.Join(src, journalOf(keys[2]))
	b := read(t, src, journalOf(keys[2]))
	if err := os.WriteFile(j, bytes.Replace(b, []byte(`"step 1"`), []byte(`"step 9"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	fs2, err := file.Open(src, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs2.Close()
	es2 := etcd.New(etcdtest.Client(t), etcd.Options{Prefix: etcdtest.Prefix(t)})
	_, err = migrate.Copy(ctx, fs2, es2, nil, nil)
	if reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("copy of a tampered journal: got %v, want CORRUPT_STATE", err)
	}
	if ks, _ := es2.Keys(ctx); len(ks) != 0 {
		t.Fatalf("a refused copy wrote documents: %v", ks)
	}
	// The file target refuses to overwrite files either.
	dst := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dst, ".asdd", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, keys[1]), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Copy(ctx, es, migrate.FileTarget{Root: dst}, nil, nil)
	if reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("copy over an existing file: got %v, want CONFLICT", err)
	}
	// Nor next to sealed journal segments of the document, even with its
	// snapshot and live journal gone.
	seg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(seg, ".asdd", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seg, ".asdd/state/journal.000000000001-000000000004.ndjson"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Copy(ctx, es, migrate.FileTarget{Root: seg}, nil, nil)
	if reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("copy next to journal segments: got %v, want CONFLICT", err)
	}
	if _, err := os.Stat(filepath.Join(seg, keys[1])); err == nil {
		t.Fatal("a refused copy wrote the manifest")
	}
}

func run(t *testing.T, wantCode int, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "CUSTODIAN_STORE=", "CUSTODIAN_SERVER=")
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != wantCode {
		t.Fatalf("custodian %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out.String(), errb.String())
	}
	return out.String() + errb.String()
}

// The commands, as separate processes: migrate a project to etcd, use it
// there (by --store and by store: in the config), migrate it back.
func TestCommands(t *testing.T) {
	src := fileProject(t)
	url := "etcd://" + etcdtest.Shared(t).URL() + etcdtest.Prefix(t)
	out := run(t, 0, "-C", src, "migrate", "--to", url)
	if !strings.Contains(out, "3 documents copied") || !strings.Contains(out, "copied .asdd/state/manifest.json: revision 8, 8 records, verified") {
		t.Fatalf("migrate output:\n%s", out)
	}
	// Again: refused, nothing overwritten (exit 4).
	out = run(t, 4, "-C", src, "migrate", "--to", url)
	if !strings.Contains(out, "CONFLICT") {
		t.Fatalf("second migrate:\n%s", out)
	}
	// Use the etcd store from another directory, by flag and by config.
	other := t.TempDir()
	out = run(t, 0, "-C", other, "--store", url, "verify")
	if strings.Count(out, "ok ") != 3 {
		t.Fatalf("verify on etcd:\n%s", out)
	}
	run(t, 0, "-C", other, "--store", url, "debug", "write", ".asdd/state/manifest.json", "--writer", "remote", "--count", "2")
	if err := os.MkdirAll(filepath.Join(other, ".asdd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ".asdd", "config.yaml"), []byte("# state on etcd\nstore: "+url+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = run(t, 0, "-C", other, "--json", "history", ".asdd/state/manifest.json")
	var recs []store.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 10 || recs[9].Actor != "remote" {
		t.Fatalf("history through the config's store: (%v)\n%s", err, out)
	}
	// On etcd the only local files are the mirrors of what the commands
	// read or wrote: no journal, no lock.
	for _, name := range []string{"journal.ndjson", ".lock", ".marks"} {
		if _, err := os.Stat(filepath.Join(other, ".asdd", "state", name)); !os.IsNotExist(err) {
			t.Fatalf("the etcd store wrote the file store's %s: %v", name, err)
		}
	}
	if ms, err := mirror.Read(other, ".asdd/state/manifest.json"); err != nil || ms.State != "ok" || ms.Rev != 10 {
		t.Fatalf("mirror of the manifest after the writes: %+v %v", ms, err)
	}
	// And back to files, in a third directory; the chain continues.
	back := t.TempDir()
	out = run(t, 0, "-C", back, "--json", "migrate", "--to", "file", "--from", url)
	var rep struct {
		Documents []migrate.Doc `json:"documents"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Documents) != 3 || rep.Documents[1].Revision != 10 {
		t.Fatalf("migrate --to file: (%v)\n%s", err, out)
	}
	out = run(t, 0, "-C", back, "verify")
	if strings.Count(out, "ok ") != 3 {
		t.Fatalf("verify after migrating back:\n%s", out)
	}
	orig := read(t, src, journalOf(keys[1]))
	got := read(t, back, journalOf(keys[1]))
	if !bytes.HasPrefix(got, orig) || bytes.Count(got, []byte("\n")) != 10 {
		t.Fatalf("the migrated journal does not extend the original byte for byte")
	}
	run(t, 2, "-C", back, "migrate", "--to", "redis://x")
	run(t, 2, "-C", back, "migrate", "--to", "file")
}

// Migrating etcd -> files in a project that holds mirrors of the etcd
// documents (package mirror) replaces the intact mirrors with the
// documents and their journals and removes the mirrors' state files; an
// edited mirror is a file of someone's, and stops the migration like any
// other file in the way.
func TestToFilesOverMirrors(t *testing.T) {
	ctx := context.Background()
	src := fileProject(t)
	fs, err := file.Open(src, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	es := etcd.New(etcdtest.Client(t), etcd.Options{Prefix: etcdtest.Prefix(t)})
	if _, err := migrate.Copy(ctx, fs, es, nil, nil); err != nil {
		t.Fatal(err)
	}
	back := t.TempDir()
	m, err := mirror.Open(back, mirror.Options{NoNotice: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Refresh(ctx, es); err != nil {
		t.Fatal(err)
	}
	m.Close()
	edited := filepath.Join(back, ".impl", "manifest.json")
	orig := read(t, back, ".impl/manifest.json")
	if err := os.WriteFile(edited, []byte(`{"edited":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Copy(ctx, es, migrate.FileTarget{Root: back}, nil, nil); reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("over an edited mirror: %v, want CONFLICT", err)
	}
	if err := os.WriteFile(edited, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Copy(ctx, es, migrate.FileTarget{Root: back}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !bytes.Equal(read(t, src, journalOf(k)), read(t, back, journalOf(k))) || !bytes.Equal(read(t, src, k), read(t, back, k)) {
			t.Errorf("%s: differs after migrating over its mirror", k)
		}
		if _, err := os.Stat(filepath.Join(back, filepath.FromSlash(mirror.StatePath(k)))); err == nil {
			t.Errorf("%s: mirror state file left behind", k)
		}
	}
}
