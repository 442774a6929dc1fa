package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/mcp"
	"github.com/custodian-dev/custodian/reason"
)

// TestSubscription: a commit made by the CLI (another store, as another
// process makes it) reaches a subscribed MCP client as
// notifications/resources/updated, under the handshake protocol
// (resources/subscribe) and under 2026-07-28 (subscriptions/listen).
func TestSubscription(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
	}{{"2025-11-25", []string{"2025-11-25"}}, {"latest", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CUSTODIAN_ACTOR", actor)
			p := newProject(t)
			p.do(asdd.Init{Sprint: "S1"})
			s := mcp.New(mcp.Options{Service: func(context.Context) (app.Service, error) { return p.svc, nil }, ProtocolVersions: tc.versions})
			t.Cleanup(func() { s.Close() })
			updates := make(chan string, 100)
			cs := connect(t, s, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
				updates <- r.Params.URI
			}})
			uri := mcp.URIPrefix + asdd.Key
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			subscribed := make(chan error, 1)
			go func() { subscribed <- cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}) }()
			if len(tc.versions) > 0 {
				// the handshake protocol answers the subscription at once
				if err := <-subscribed; err != nil {
					t.Fatal(err)
				}
			}
			// Under 2026-07-28 the subscription is a stream that stays
			// open: commit until one notification arrives.
			deadline := time.After(20 * time.Second)
			for i := 1; ; i++ {
				if code, out := runCLI(t, p, "slice", "add", fmt.Sprintf("SLICE-%03d", i), "--name", "from the CLI"); code != 0 {
					t.Fatalf("CLI: exit %d: %s", code, out)
				}
				select {
				case got := <-updates:
					if got != uri {
						t.Fatalf("update of %s, want %s", got, uri)
					}
					res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
					if err != nil || !strings.Contains(res.Contents[0].Text, fmt.Sprintf("SLICE-%03d", i)) {
						t.Fatalf("read after the update: %v", err)
					}
					return
				case err := <-subscribed:
					if err != nil {
						t.Fatalf("subscription: %v", err)
					}
					subscribed = nil // answered (the handshake protocol)
				case <-deadline:
					t.Fatal("no resource update within 20 s of the CLI's commits")
				case <-time.After(300 * time.Millisecond):
				}
			}
		})
	}
}

// TestConcurrentClaims: 32 MCP clients claim the same 8 tasks at once;
// each task has exactly one winner, every other claim is CONFLICT, nothing
// is lost, and `custodian verify` is clean.
func TestConcurrentClaims(t *testing.T) {
	t.Setenv("CUSTODIAN_ACTOR", actor)
	p := newProject(t)
	p.do(asdd.Init{Sprint: "S1"})
	p.do(asdd.AddSlice{ID: "SLICE-001", Name: "auth", Type: asdd.TypeFeature})
	const tasks, clients = 8, 32
	for i := range tasks {
		p.do(asdd.AddTask{Slice: "SLICE-001", ID: fmt.Sprintf("t%d", i), Wave: 1})
	}
	srv := p.server(false)
	sessions := make([]*sdk.ClientSession, clients)
	for i := range sessions {
		sessions[i] = connect(t, srv, nil)
	}
	type outcome struct {
		client, task int
		code         reason.Code
		text         string
	}
	results := make(chan outcome, clients*tasks)
	var start, wg sync.WaitGroup
	start.Add(1)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			for k := range tasks {
				task := (k + c) % tasks // clients start on different tasks
				res, err := sessions[c].CallTool(context.Background(), &sdk.CallToolParams{Name: "task_claim",
					Arguments: map[string]any{"slice": "SLICE-001", "task": fmt.Sprintf("t%d", task), "agent": fmt.Sprintf("impl-%d", c)}})
				if err != nil {
					results <- outcome{c, task, "PROTOCOL", err.Error()}
					continue
				}
				results <- outcome{c, task, errorCode(res), text(res)}
			}
		}()
	}
	start.Done()
	wg.Wait()
	close(results)
	winners := map[int]int{}
	for r := range results {
		switch r.code {
		case "":
			if w, dup := winners[r.task]; dup {
				t.Fatalf("task t%d won by clients %d and %d", r.task, w, r.client)
			}
			winners[r.task] = r.client
		case reason.Conflict:
		default:
			t.Fatalf("client %d, task t%d: %s", r.client, r.task, r.text)
		}
	}
	if len(winners) != tasks {
		t.Fatalf("%d tasks won, want %d", len(winners), tasks)
	}
	m, err := p.svc.Manifest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range m.Slice("SLICE-001").Tasks {
		var id int
		fmt.Sscanf(tk.ID, "t%d", &id)
		if tk.Status != asdd.TaskClaimed || tk.Agent != fmt.Sprintf("impl-%d", winners[id]) {
			t.Fatalf("task %s: %s by %s, the winner was impl-%d", tk.ID, tk.Status, tk.Agent, winners[id])
		}
	}
	// 2 init+slice + 8 tasks + 8 claims: nothing lost, nothing extra
	if m.Revision != 2+tasks+tasks {
		t.Fatalf("revision %d, want %d", m.Revision, 2+2*tasks)
	}
	p.st.Close()
	if code, out := runCLI(t, p, "verify"); code != 0 {
		t.Fatalf("verify: exit %d: %s", code, out)
	}
}
