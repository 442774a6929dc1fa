package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store/file"
)

// movingClock is a clock a test moves forward.
type movingClock struct{ ns atomic.Int64 }

func newMovingClock() *movingClock {
	c := &movingClock{}
	c.ns.Store(clock.UnixNano())
	return c
}

func (c *movingClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *movingClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// monitorProject is a project whose service (Local, or Remote over a
// daemon's API) runs on clk.
func monitorProject(t *testing.T, remote bool, clk *movingClock) *project {
	root := t.TempDir()
	st, err := file.Open(root, file.Options{Now: clk.now, Hold: remote})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if !remote {
		svc := app.NewLocal(app.Options{Store: st, Root: root, Now: clk.now, Logger: slog.New(slog.DiscardHandler)})
		return &project{root: root, svc: svc, ctx: func(bool) context.Context { return context.Background() }}
	}
	srv := server.New(st, server.Options{Root: root, Now: clk.now, Logger: slog.New(slog.DiscardHandler), Documents: app.DocumentKey})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-done })
	c, err := client.New("http://"+l.Addr().String(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &project{root: root, svc: app.NewRemote(c), ctx: func(bool) context.Context { return context.Background() }}
}

// summary is what a monitor pass reports, without times.
func summary(res *app.MonitorResult, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	s := ""
	for _, a := range res.Actions {
		s += fmt.Sprintf("%s %s %s; ", a.Kind, a.Agent, a.Slice)
	}
	return fmt.Sprintf("actions [%s] halted %v notices %d pending %d warnings %v", s, res.Halted, len(res.Notices), len(res.Pending), res.Warnings)
}

// One pass of the heartbeat monitor does the same through either
// implementation: nothing while the agent speaks, a retry request after
// the timeout, an escalation (the slice halted, a notice and a failure-log
// row) after another, nothing more until the agent speaks again.
func TestMonitorOnceSameEverywhere(t *testing.T) {
	var got [2][]string
	for i, remote := range []bool{false, true} {
		t.Run(fmt.Sprint("remote=", remote), func(t *testing.T) {
			clk := newMovingClock()
			p := monitorProject(t, remote, clk)
			ctx := context.Background()
			cfg := asdd.DefaultConfig()
			pass := func() { got[i] = append(got[i], summary(app.MonitorOnce(ctx, p.svc, cfg, clk.now()))) }
			if _, err := app.MonitorOnce(ctx, p.svc, cfg, clk.now()); reason.CodeOf(err) != reason.NotFound {
				t.Fatalf("monitor without a manifest: %v, want NOT_FOUND", err)
			}
			setup(t, p)
			must(t)(p.svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive, Slice: "SLICE-001"}))
			pass()
			clk.add(cfg.Heartbeat.Timeout.D() + time.Minute)
			pass()
			pass()
			clk.add(cfg.Heartbeat.Timeout.D() + time.Minute)
			pass()
			pass()
			m, err := p.svc.Manifest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = append(got[i], "status "+m.Slice("SLICE-001").Status)
			got[i] = append(got[i], p.files(t)...)
		})
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("Local and Remote differ (-local +remote):\n%s", diff)
	}
	want := []string{
		"actions [] halted [] notices 0 pending 0 warnings []",
		"actions [retry_requested spec_agent SLICE-001; ] halted [] notices 0 pending 1 warnings []",
		"actions [] halted [] notices 0 pending 1 warnings []",
		"actions [escalated spec_agent SLICE-001; ] halted [SLICE-001] notices 1 pending 1 warnings []",
		"actions [] halted [] notices 0 pending 1 warnings []",
		"status BLOCKED",
	}
	if len(got[0]) < len(want) || !cmp.Equal(got[0][:len(want)], want) {
		t.Fatalf("monitor passes (-want +got):\n%s", cmp.Diff(want, got[0]))
	}
	files := strings.Join(got[0][len(want):], "\n")
	if !strings.Contains(files, asdd.FailureLogPath+": ") || !strings.Contains(files, ".asdd/escalations/") {
		t.Fatalf("no failure-log row or escalation notice written:\n%s", files)
	}
}
