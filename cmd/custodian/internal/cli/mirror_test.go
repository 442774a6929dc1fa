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

// A project whose documents are mirrors of an etcd store, run with no
// store chosen (a fleet machine whose --store was forgotten), is refused
// with the store named instead of forking the state into local files.
func TestMirrorsRefuseTheFileStore(t *testing.T) {
	e := newASDDEnv(t)
	e.write(".impl/manifest.json", `{"tasks":[]}`)
	e.write(".impl/.mirror", `{"store":"etcd://10.0.0.5:2379/team/proj/","documents":{}}`)
	out := e.want(2, "get", ".impl/manifest.json")
	if !strings.Contains(out, "etcd://10.0.0.5:2379/team/proj/") || !strings.Contains(out, "mirrors") {
		t.Fatalf("refusal does not name the store:\n%s", out)
	}
	if out := e.want(2, "serve", "--addr", "", "--monitor-every", "0"); !strings.Contains(out, "mirrors") {
		t.Fatalf("serve on mirrors:\n%s", out)
	}
	// Chosen explicitly, the file store opens.
	e.want(0, "--store", "file", "get", ".impl/manifest.json")
}
