package cycle

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// TestCycleRequests: a changing verb's command line becomes the request it
// sends (its operation, as package cycle defines it, and the actor: the
// agent when no --actor or $CUSTODIAN_ACTOR names one); bad input is
// refused before anything is sent.
func TestCycleRequests(t *testing.T) {
	t.Setenv("CUSTODIAN_ACTOR", "")
	const id = "cycle-v1-20260122T020000-k3x9qa"
	req := func(op cycle.Op, actor string) *wire.CycleRequest {
		r, err := wire.CycleRequestOf(id, op, nil, actor)
		if err != nil {
			t.Fatal(err)
		}
		return &r
	}
	four := 4
	create, err := json.Marshal(wire.CycleCreate{Task: "OAuth login", Description: "with Google", MaxIterations: &four})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cycle.New(id, "OAuth", "", 3, time.Date(2026, 1, 22, 2, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	docBody, err := cycle.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(t.TempDir(), "cycle.json")
	if err := os.WriteFile(doc, docBody, 0o644); err != nil {
		t.Fatal(err)
	}
	three := uint64(3)
	for _, tc := range []struct {
		args []string
		want *wire.CycleRequest
		code int
	}{
		{[]string{"create", "OAuth login", "--description", "with Google", "--max-iterations", "4", "--id", id, "--actor", "lead"},
			&wire.CycleRequest{ID: id, Op: "create", Args: create, Actor: "lead"}, 0},
		{[]string{"agent", id, "ra", "completed", "--files-modified", "3", "--output", "docs/req.md"},
			req(cycle.SetAgent{Agent: "ra", Status: "completed", FilesModified: 3, OutputFiles: []string{"docs/req.md"}}, "ra"), 0},
		{[]string{"change", id, "--file", "src/a.ts", "--action", "create", "-m", "OAuth config"},
			req(cycle.AppendChange{File: "src/a.ts", Action: "create", Agent: cycle.AgentCD, Description: "OAuth config"}, cycle.AgentCD), 0},
		{[]string{"change", id, "--file", "src/a.ts", "--action", "rename"}, nil, reason.ExitUsage},
		{[]string{"change", id, "--action", "create"}, nil, reason.ExitUsage},
		{[]string{"agent", "../etc", "ra", "running"}, nil, reason.ExitUsage},
		{[]string{"rebuild", id, "--actor", "lead"}, &wire.CycleRequest{ID: id, Op: "rebuild", Actor: "lead"}, 0},
		{[]string{"rebuild", "../etc"}, nil, reason.ExitUsage},
		{[]string{"put", id, "--if-revision", "3", "--file", doc, "--actor", "lead"}, &wire.CycleRequest{ID: id, Op: "put", Args: docBody, IfRevision: &three, Actor: "lead"}, 0},
		{[]string{"put", id, "--file", doc}, nil, reason.ExitUsage},
		{[]string{"put", id, "--if-revision", "-1", "--file", doc}, nil, reason.ExitUsage},
		{[]string{"put", "cycle-v1-20260122T020000-other0", "--if-revision", "0", "--file", doc}, nil, reason.ExitUsage},
	} {
		var got *wire.CycleRequest
		cmd := NewCmd(&cmdutil.App{}, &Runs{Send: func(_ context.Context, r *wire.CycleRequest) error { got = r; return nil }})
		err := cmdtest.Execute(cmd, tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("cycle %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("cycle %q: request differs (-want +got):\n%s", tc.args, d)
		}
	}
}

// TestCycleReadOptions: the reading commands' and append's command lines
// become their options; bad input is refused before they run.
func TestCycleReadOptions(t *testing.T) {
	const id = "cycle-v1-20260122T020000-k3x9qa"
	for _, tc := range []struct {
		args []string
		want any
		code int
	}{
		{[]string{"show", id}, &ShowOptions{ID: id}, 0},
		{[]string{"show"}, nil, reason.ExitUsage},
		{[]string{"list"}, &ListOptions{}, 0},
		{[]string{"list", id}, nil, reason.ExitUsage},
		{[]string{"signal", id, "--wait", "--timeout", "30m"}, &SignalOptions{ID: id, Wait: true, Timeout: 30 * time.Minute}, 0},
		{[]string{"signal", id, "--timeout", "soon"}, nil, reason.ExitUsage},
		{[]string{"sync", id}, &SyncOptions{ID: id}, 0},
		{[]string{"append", id, "--log", "coordination/d.ndjson", "--line", `{ "a" : 1 }`}, &AppendOptions{ID: id, Log: "coordination/d.ndjson", Records: [][]byte{[]byte(`{"a":1}`)}}, 0},
		{[]string{"append", id, "--log", "../d.ndjson", "--line", `{}`}, nil, reason.ExitUsage},
		{[]string{"append", id, "--log", "d.txt", "--line", `{}`}, nil, reason.ExitUsage},
		{[]string{"append", id, "--log", "d.ndjson", "--line", `{"a":`}, nil, reason.ExitUsage},
		{[]string{"append", "../etc", "--log", "d.ndjson", "--line", `{}`}, nil, reason.ExitUsage},
	} {
		var got any
		app := &cmdutil.App{In: strings.NewReader("")}
		cmd := NewCmd(app, &Runs{
			Show:   func(_ context.Context, o *ShowOptions) error { o.App = nil; got = o; return nil },
			List:   func(_ context.Context, o *ListOptions) error { o.App = nil; got = o; return nil },
			Signal: func(_ context.Context, o *SignalOptions) error { o.App = nil; got = o; return nil },
			Sync:   func(_ context.Context, o *SyncOptions) error { o.App = nil; got = o; return nil },
			Append: func(_ context.Context, o *AppendOptions) error { o.App = nil; got = o; return nil },
		})
		err := cmdtest.Execute(cmd, tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("cycle %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if tc.want == nil {
			if got != nil {
				t.Errorf("cycle %q: ran with %+v", tc.args, got)
			}
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("cycle %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
