package cycle

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil/cmdtest"
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
	} {
		var got *wire.CycleRequest
		cmd := NewCmd(&cmdutil.App{}, func(_ context.Context, r *wire.CycleRequest) error { got = r; return nil })
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
