package cli

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// The default daemon is safe on a machine shared with other users (issue
// 18 item 2): without --token, a change over TCP needs the admin token,
// the unix socket (the owner's, mode 0600) needs none, and the document
// API serves only the custodian's documents, never another project file.
func TestServeDefaultIsSafeOnLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init")
	p.write("package.json", `{"scripts":{"test":"true"}}`)
	d := startServe(t, p.dir, "--addr", addr, "--admin-token", "adm")
	defer d.cmd.Process.Kill()
	ctx := context.Background()
	stranger, err := client.New("http://"+addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	if _, err := stranger.Get(ctx, "package.json"); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("reading package.json through the document API: %v, want INVALID_INPUT", err)
	}
	if _, err := stranger.Op(ctx, "heartbeat", asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}); reason.CodeOf(err) != reason.Unauthorized {
		t.Fatalf("a TCP operation without a token: %v, want UNAUTHORIZED", err)
	}
	if _, err := stranger.Write(ctx, asdd.Key, storeChange(`{"slices":[]}`), false); reason.CodeOf(err) != reason.Unauthorized {
		t.Fatalf("a TCP write without a token: %v, want UNAUTHORIZED", err)
	}
	owner, err := client.New("http://"+addr, client.Options{Token: "adm"})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Get(ctx, asdd.Key); err != nil {
		t.Fatalf("a TCP read with the admin token: %v", err)
	}
	if _, err := owner.Get(ctx, "package.json"); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("reading package.json through the document API: %v, want INVALID_INPUT", err)
	}
	if _, err := d.c.Get(ctx, asdd.Key); err != nil {
		t.Fatalf("a read over the unix socket: %v", err)
	}
	if _, err := d.c.Write(ctx, ".vscode/settings.json", storeChange(`{"x":1}`), true); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("creating .vscode/settings.json through the document API: %v, want INVALID_INPUT", err)
	}
	resp, err := http.Get("http://" + addr + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
}

func storeChange(v string) store.Change {
	return store.Change{Value: []byte(v), Actor: "stranger", Reason: "test"}
}
