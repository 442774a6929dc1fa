package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
)

// The daemon follows edits of .asdd/config.yaml: an operation that starts
// configRecheck after an edit sees it, concurrent operations share the
// last look (run with -race).
func TestCachedConfigFollowsEdits(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, filepath.FromSlash(asdd.ConfigPath))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	def, err := os.ReadFile("../asdd/config.default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(timeout string) {
		t.Helper()
		b := strings.Replace(string(def), "timeout: 15m", "timeout: "+timeout, 1)
		if b == string(def) && timeout != "15m" {
			t.Fatal("heartbeat timeout not found in the default config")
		}
		if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get := cachedConfig(root)
	timeout := func() time.Duration {
		t.Helper()
		cfg, err := get()
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(cfg.Heartbeat.Timeout)
	}
	if got := timeout(); got != 15*time.Minute {
		t.Fatalf("no config file: timeout %v, want the default 15m", got)
	}
	write("3m")
	time.Sleep(2 * configRecheck)
	if got := timeout(); got != 3*time.Minute {
		t.Fatalf("after an edit: timeout %v, want 3m", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if _, err := get(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	write("7m")
	wg.Wait()
	time.Sleep(2 * configRecheck)
	if got := timeout(); got != 7*time.Minute {
		t.Fatalf("after an edit under load: timeout %v, want 7m", got)
	}
}
