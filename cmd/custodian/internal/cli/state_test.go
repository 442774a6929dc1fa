package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/agentstate"
)

func TestStateGoldenLifecycle(t *testing.T) {
	dir := t.TempDir()
	tr := newTranscript(t, dir, agentstate.Key)
	tr.note("no state yet")
	tr.run("", "state", "read")
	tr.run("", "state", "init", "Add OAuth login")
	tr.run("", "state", "init", "Something else")
	tr.run("", "state", "read", "status")
	tr.note("deep merge from an argument, then from stdin")
	tr.run("", "state", "update", `{"currentStage":"PLAN","currentPhase":"1.1","stages":{"EXPLORE":{"status":"completed","agentCount":3},"PLAN":{"status":"in_progress"}},"worktree":"/tmp/wt"}`)
	tr.run(`{"stages":{"PLAN":{"phases":{"1.1":{"status":"completed"}},"restartCount":1}}}`, "state", "update")
	tr.run("# Plan\n\n1. do it\n", "state", "record-output", "1.1")
	tr.run(`{"tasks":["task-1","task-2"]}`, "state", "record-output", "2.1", "-", "--ext", "json")
	tr.run("", "state", "read", "files.2.1")
	tr.run("", "state", "read", "stages.PLAN")
	tr.run("", "state", "record-failure", "--phase", "2.1", "--error", "Task agent timeout on task-3", "--context", `{"completedTasks":["task-1","task-2"],"failedTask":"task-3","pendingTasks":["task-4","task-5"]}`)
	tr.run("", "state", "compact", "--summary", "plan done, implementing")
	tr.run("", "state", "update", `{"status":"restarting","failure":null}`)
	tr.run("", "state", "init", "Start over", "--force")
	tr.check("state/lifecycle")
	out, err := os.ReadFile(filepath.Join(dir, ".agents", "tmp", "phases", "1.1-output.md"))
	if err != nil || string(out) != "# Plan\n\n1. do it\n" {
		t.Fatalf("phase output = %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agents", "tmp", "phases", "2.1-output.json")); err != nil {
		t.Fatal(err)
	}
	// The journal records every change; history lists them.
	if n := len(implHistoryOf(t, dir, agentstate.Key)); n != 9 {
		t.Errorf("%d commits, want 9", n)
	}
}

func TestStateGoldenBadInput(t *testing.T) {
	dir := t.TempDir()
	tr := newTranscript(t, dir, agentstate.Key)
	tr.note("every command but init and read needs a state")
	tr.run("", "state", "update", `{"status":"completed"}`)
	tr.run("x", "state", "record-output", "1.1")
	tr.run("", "state", "record-failure", "--phase", "1.1", "--error", "x")
	tr.run("", "state", "compact")
	tr.run("", "state", "read", "status")
	tr.run("", "state", "init", " ")
	tr.run("", "state", "init", "Fix the flaky test")
	tr.note("bad values are rejected and change nothing")
	tr.run("", "state", "update", `{"status":"done"}`)
	tr.run("", "state", "update", `{"currentStage":"DEPLOY"}`)
	tr.run("", "state", "update", `{"currentPhase":"5.1"}`)
	tr.run("", "state", "update", `{"stages":{"REVIEW":{"status":"pending"}}}`)
	tr.run("", "state", "update", `{"stages":{"PLAN":{"phases":{"3.1":{}}}}}`)
	tr.run("", "state", "update", `{"version":3}`)
	tr.run("", "state", "update", `{"status":`)
	tr.run("", "state", "update", `["status"]`)
	tr.run("", "state", "update")
	tr.run("", "state", "record-output", "9.9")
	tr.run("x", "state", "record-output", "1.1", "--ext", "../sh")
	tr.run("not json", "state", "record-output", "1.1", "--ext", "json")
	tr.run("", "state", "record-output", "1.1", "testdata/state/no-such-output.md")
	tr.run("", "state", "record-failure", "--phase", "6", "--error", "x")
	tr.run("", "state", "record-failure", "--phase", "1.1")
	tr.run("", "state", "record-failure", "--phase", "1.1", "--error", "x", "--context", "[1]")
	tr.run("", "state", "read", "stages.DEPLOY")
	tr.run("", "state", "frobnicate")
	tr.check("state/bad-input")
	if _, err := os.Stat(filepath.Join(dir, ".agents", "tmp", "phases")); !os.IsNotExist(err) {
		t.Errorf("a rejected record-output wrote to the phases directory: %v", err)
	}
}

// pluginState is a state file as the original plugin writes it: schema v2
// with fields of its own (worktree, webSearch, reviewFix).
const pluginState = `{
  "version": 2,
  "task": "Add rate limiting",
  "status": "in_progress",
  "currentStage": "IMPLEMENT",
  "currentPhase": "2.2",
  "worktree": "/repo/.worktrees/rate-limit",
  "webSearch": true,
  "stages": {
    "EXPLORE": { "status": "completed", "agentCount": 2 },
    "PLAN": { "status": "completed", "phases": { "1.1": { "status": "completed" } }, "restartCount": 0 },
    "IMPLEMENT": { "status": "in_progress", "phases": {}, "restartCount": 0 },
    "TEST": { "status": "pending", "enabled": true, "restartCount": 0 },
    "FINAL": { "status": "pending", "restartCount": 0 }
  },
  "files": { "1.1": ".agents/tmp/phases/1.1-output.md" },
  "failure": null,
  "compaction": { "lastCompactedAt": null, "history": [] },
  "startedAt": "2026-01-29T09:00:00.000Z",
  "updatedAt": "2026-01-29T09:40:12.345Z",
  "stoppedAt": null,
  "reviewFix": { "issues": [] }
}
`

// TestStateGoldenRecovery: the seed's .tmp rules on read, and a plain file
// the plugin wrote.
func TestStateGoldenRecovery(t *testing.T) {
	write := func(t *testing.T, dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, ".agents", "tmp", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(dir, name string) bool {
		_, err := os.Stat(filepath.Join(dir, ".agents", "tmp", name))
		return err == nil
	}
	t.Run("plugin-file", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "state.json", pluginState)
		tr := newTranscript(t, dir, agentstate.Key)
		tr.run("", "state", "read", "currentPhase")
		tr.run("", "state", "read", "worktree")
		tr.run("", "state", "update", `{"currentPhase":"2.3","stages":{"IMPLEMENT":{"phases":{"2.2":{"status":"completed"}}}}}`)
		tr.check("state/plugin-file")
	})
	t.Run("tmp-and-main", func(t *testing.T) {
		// An interrupted write: the temp file is dropped, main is loaded.
		dir := t.TempDir()
		write(t, dir, "state.json", pluginState)
		write(t, dir, "state.json.tmp", strings.Replace(pluginState, `"2.2"`, `"2.3"`, 1)[:200])
		tr := newTranscript(t, dir, agentstate.Key)
		tr.run("", "state", "read", "currentPhase")
		tr.check("state/tmp-and-main")
		if exists(dir, "state.json.tmp") {
			t.Error("the temp file survived")
		}
	})
	t.Run("tmp-only", func(t *testing.T) {
		// The write completed but the rename did not: the temp file is promoted.
		dir := t.TempDir()
		write(t, dir, "state.json.tmp", pluginState)
		tr := newTranscript(t, dir, agentstate.Key)
		tr.run("", "state", "read", "task")
		tr.check("state/tmp-only")
		if exists(dir, "state.json.tmp") || !exists(dir, "state.json") {
			t.Error("the temp file was not promoted")
		}
	})
	t.Run("not-json", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "state.json", `{"version": 2, "task": `)
		tr := newTranscript(t, dir, agentstate.Key)
		tr.run("", "state", "read")
		tr.run("", "state", "update", `{"status":"stopped"}`)
		tr.run("", "state", "init", "x", "--force")
		tr.check("state/not-json")
		if b, _ := os.ReadFile(filepath.Join(dir, ".agents", "tmp", "state.json")); string(b) != `{"version": 2, "task": ` {
			t.Errorf("the damaged state was changed: %q", b)
		}
	})
	t.Run("other-version", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "state.json", `{"plugin":"ants","version":3,"status":"in_progress","currentPhase":"A0"}`+"\n")
		tr := newTranscript(t, dir, agentstate.Key)
		tr.run("", "state", "read")
		tr.run("", "state", "update", `{"status":"stopped"}`)
		tr.check("state/other-version")
	})
}
