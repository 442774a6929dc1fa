package serve

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

// TestServeConfig: the flags become the daemon's configuration; a bad
// size or log level is a usage error before anything starts.
func TestServeConfig(t *testing.T) {
	t.Setenv("CUSTODIAN_TOKEN", "")
	t.Setenv("CUSTODIAN_ADMIN_TOKEN", "")
	t.Setenv("CUSTODIAN_STORE", "")
	t.Setenv("CUSTODIAN_MAX_DOCUMENT_BYTES", "")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".asdd"), 0o755); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) (*Options, error) {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{Dir: dir}, func(_ context.Context, o *Options) error { got = o; return nil }), args...)
		return got, err
	}
	o, err := parse("--addr", "", "--socket", "run/c.sock", "--monitor-every", "0s", "--log-level", "DEBUG", "--memory-limit", "0", "--journal-segment-size", "1MB", "--max-watchers", "9")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := serveConfig(o.App, o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "" || cfg.Socket != "run/c.sock" || cfg.MonitorEvery != 0 || cfg.MemoryLimit != 0 || cfg.SegmentBytes != 1<<20 || cfg.MaxWatchers != 9 || cfg.Root == "" {
		t.Errorf("config %+v", cfg)
	}
	o, err = parse()
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = serveConfig(o.App, o); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:7420" || cfg.SnapshotInterval != 50*time.Millisecond || cfg.MonitorEvery != time.Minute || cfg.MemoryLimit != 160<<20 {
		t.Errorf("defaults %+v", cfg)
	}
	for _, args := range [][]string{{"--memory-limit", "lots"}, {"--journal-segment-size", "1MB,2MB"}} {
		o, err := parse(args...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := serveConfig(o.App, o); reason.ExitCode(err) != reason.ExitUsage {
			t.Errorf("serve %q: %v, want a usage error", args, err)
		}
	}
	if _, err := parse("--log-level", "chatty"); cmdtest.ExitCode(err) != reason.ExitUsage {
		t.Errorf("--log-level chatty: %v", err)
	}
}

// Outside a project (no .asdd, .impl, .agents/tmp or .workflow/.cycle at or
// above the directory) serve on the file store is NOT_FOUND with the init
// hint, before anything is created; on etcd the directory may be empty.
func TestServeConfigNeedsAProjectOnTheFileStore(t *testing.T) {
	t.Setenv("CUSTODIAN_STORE", "")
	dir := t.TempDir()
	o := &Options{App: &cmdutil.App{Dir: dir}, LogLevel: "info"}
	if _, err := serveConfig(o.App, o); reason.CodeOf(err) != reason.NotFound {
		t.Fatalf("serve outside a project: %v, want NOT_FOUND", err)
	}
	o.App.StoreURL = "etcd://127.0.0.1:1/p"
	if _, err := serveConfig(o.App, o); err != nil {
		t.Fatalf("serve on etcd in an empty directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("serveConfig created %v", entries)
	}
}
