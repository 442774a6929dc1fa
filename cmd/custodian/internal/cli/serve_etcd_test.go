package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `custodian serve` on an etcd store nobody answers (from --store or from
// the config's store:) fails within the dial timeout naming the endpoint,
// and leaves the directory free: the next attempt fails the same way, not
// on the pid lock. Nothing is left listening.
func TestServeEtcdUnreachable(t *testing.T) {
	e := newASDDEnv(t)
	url := "etcd://127.0.0.1:1/proj?dial-timeout=200ms"
	for _, args := range [][]string{
		{"--store", url, "serve", "--addr", "", "--monitor-every", "0"},
		{"--store", url, "serve", "--addr", "", "--monitor-every", "0"},
	} {
		out := e.want(1, args...)
		if !strings.Contains(out, "127.0.0.1:1") {
			t.Fatalf("error does not name the endpoint:\n%s", out)
		}
	}
	e.write(".asdd/config.yaml", "store: "+url+"\n")
	out := e.want(1, "serve", "--addr", "", "--monitor-every", "0")
	if !strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("store: from the config not used:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".asdd", "state", "custodian.sock")); !os.IsNotExist(err) {
		t.Fatalf("a socket was left behind: %v", err)
	}
}
