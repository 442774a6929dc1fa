package storeopen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

func TestStoreKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"store: etcd://a:2379/p\n", "etcd://a:2379/p"},
		{"version: 1\nagents: []\nstore: \"etcd://u@a:2379,b:2379/team\"  # shared\n", "etcd://u@a:2379,b:2379/team"},
		{"version: 1\n", ""},
		{"store:\n  url: etcd://a:2379\n", ""}, // not a string
		{"nested:\n  store: etcd://a:2379\n", ""},
		{"store: [unclosed\n", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := storeKey([]byte(tc.in)); got != tc.want {
			t.Errorf("storeKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestConfiguredStoreURL(t *testing.T) {
	dir := t.TempDir()
	app := &cmdutil.App{Dir: dir}
	if u, err := ConfiguredStoreURL(app); err != nil || u != "" {
		t.Fatalf("no config: %q %v", u, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".asdd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".asdd", "config.yaml"), []byte("store: etcd://cfg:2379/p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, _ := ConfiguredStoreURL(app); u != "etcd://cfg:2379/p" {
		t.Fatalf("from config: %q", u)
	}
	app.StoreURL = "etcd://flag:2379/q"
	if u, _ := ConfiguredStoreURL(app); u != "etcd://flag:2379/q" {
		t.Fatalf("the flag must win: %q", u)
	}
	// A file-store selection is not the etcd opener's.
	app.StoreURL = "file"
	if _, ok, err := OpenEtcdStore(app); ok || err != nil {
		t.Fatalf("etcd opener took --store file: %v %v", ok, err)
	}
	// A bad etcd URL is a clear INVALID_INPUT, not a fallback to files.
	app.StoreURL = "etcd://nohostport/p"
	if _, _, err := OpenEtcdStore(app); err == nil {
		t.Fatal("bad etcd URL accepted")
	}
}

func FuzzStoreKey(f *testing.F) {
	f.Add([]byte("store: etcd://a:2379/p\n"))
	f.Add([]byte("version: 1\nstore: 3\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := storeKey(data)
		if got != "" && storeKey([]byte("store: "+quote(got)+"\n")) != got {
			t.Fatalf("store key %q does not survive a round trip", got)
		}
	})
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20 || r == 0x7f:
			b = append(b, []byte(`\u00`)...)
			b = append(b, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&15])
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}
