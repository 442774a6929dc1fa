package cli

import (
	"strings"
	"testing"
	"time"
)

// custodian mirror is for a project on etcd: on the file store it is a
// usage error (exit 2) that says so; on a cluster nobody answers it fails
// within the dial timeout naming the endpoint and writes nothing.
func TestMirrorCommandBadInput(t *testing.T) {
	e := newASDDEnv(t)
	out := e.want(2, "mirror", "--once")
	if !strings.Contains(out, "etcd") {
		t.Fatalf("file-store refusal does not say mirrors are for etcd:\n%s", out)
	}
	start := time.Now()
	out = e.want(1, "--store", "etcd://127.0.0.1:1/proj?dial-timeout=200ms", "mirror", "--once")
	if !strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("unreachable cluster not named:\n%s", out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v with a 200ms dial timeout", took)
	}
	e.write(".asdd/config.yaml", "store: etcd://127.0.0.1:1/proj?dial-timeout=200ms\n")
	if out := e.want(1, "mirror"); !strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("store: from the config not used:\n%s", out)
	}
}
