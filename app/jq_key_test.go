package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// `apply` (a jq program) changes only the documents on its one list, the
// agent state and the dev cycles, in direct mode as through the daemon:
// any other JSON file of the project (package.json, the hook's settings,
// a file in the custodian's state or escalation directories, a cycle's
// progress file, git's files) is INVALID_INPUT and is neither created nor
// changed; the manifests change only through their operations.
func TestApplyChangesOnlyTheDocumentsOnItsList(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		p.write(t, "package.json", `{"name":"app"}`)
		p.write(t, ".claude/settings.json", `{"hooks":{"PreToolUse":[]}}`)
		if _, err := p.svc.UpdateState(p.ctx(false), wire.StateRequest{Op: "init", Task: "auth"}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, key := range []string{"package.json", ".claude/settings.json", ".asdd/state/evil.json", ".asdd/escalations/x.json",
			".workflow/.cycle/cycle-v1-20261125T120000-abcdef.progress/ep/plan.json", ".git/info/x.json", ".asdd/state/manifest.json",
			".impl/manifest.json", ".agents/tmp/state.json"} {
			program := `del(.hooks) | .evil = true`
			if key == ".agents/tmp/state.json" {
				program = `.currentPhase = "1.1"`
			}
			_, err := p.svc.ApplyJQ(p.ctx(false), wire.JQRequest{Key: key, Program: program})
			got = append(got, key+": "+string(reason.CodeOf(err)))
		}
		want := []string{"package.json: INVALID_INPUT", ".claude/settings.json: INVALID_INPUT", ".asdd/state/evil.json: INVALID_INPUT",
			".asdd/escalations/x.json: INVALID_INPUT", ".workflow/.cycle/cycle-v1-20261125T120000-abcdef.progress/ep/plan.json: INVALID_INPUT",
			".git/info/x.json: INVALID_INPUT", ".asdd/state/manifest.json: INVALID_INPUT", ".impl/manifest.json: INVALID_INPUT", ".agents/tmp/state.json: "}
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("apply: got %q, want %q", got, want)
				break
			}
		}
		for _, f := range []string{".asdd/state/evil.json", ".asdd/escalations/x.json", ".git/info/x.json", ".workflow"} {
			if _, err := os.Lstat(filepath.Join(p.root, f)); err == nil {
				t.Errorf("%s was created", f)
			}
		}
		for f, content := range map[string]string{"package.json": `{"name":"app"}`, ".claude/settings.json": `{"hooks":{"PreToolUse":[]}}`} {
			if b, _ := os.ReadFile(filepath.Join(p.root, f)); string(b) != content {
				t.Errorf("%s changed: %s", f, b)
			}
		}
		return got
	})
}

// A jq program runs outside the document's commit: while a slow program
// (one that runs until its time budget ends) works on the agent state,
// one-line state updates from others commit at once, and the program,
// stopped by its budget, commits nothing.
func TestAStateUpdateNeverWaitsForAJQProgram(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		if _, err := p.svc.UpdateState(ctx, wire.StateRequest{Op: "init", Task: "auth"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := p.agent.ApplyJQ(p.ctx(true), wire.JQRequest{Key: ".agents/tmp/state.json", Program: `last(range(1e12)) as $x | .currentPhase = "9.9"`, Actor: "slow"})
			done <- err
		}()
		updates := 0
		for running := true; running; {
			select {
			case err := <-done:
				if reason.CodeOf(err) != reason.InvalidInput {
					t.Errorf("the endless program: %v, want INVALID_INPUT (its time budget)", err)
				}
				running = false
			default:
				stage := [...]string{"PLAN", "IMPLEMENT"}[updates%2]
				if _, err := p.svc.UpdateState(ctx, wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"currentStage":"` + stage + `"}`)}); err != nil {
					t.Fatal(err)
				}
				updates++
			}
		}
		t.Logf("%d state updates committed while the program ran", updates)
		if updates < 3 {
			t.Errorf("only %d state updates committed while a jq program ran: they waited for it", updates)
		}
		st, _, err := p.svc.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := st.Get("currentPhase"); v == "9.9" {
			t.Error("the stopped program's result was committed")
		}
		return nil
	})
}

// Concurrent jq programs on one document lose no update: each runs on the
// value it read and commits only if the document is still there, else it
// runs again on the new value (a quick program that kept losing runs once
// inside the commit), so every increment commits.
func TestConcurrentJQProgramsLoseNoUpdate(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		if _, err := p.svc.UpdateState(ctx, wire.StateRequest{Op: "init", Task: "auth"}); err != nil {
			t.Fatal(err)
		}
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := p.svc.ApplyJQ(ctx, wire.JQRequest{Key: ".agents/tmp/state.json", Program: `.iteration = ((.iteration // 0) + 1)`, Actor: "w" + strconv.Itoa(i)})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		st, _, err := p.svc.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it, _ := st.Get("iteration"); fmt.Sprint(it) != strconv.Itoa(n) {
			t.Errorf("iteration = %v after %d increments", it, n)
		}
		return nil
	})
}
