package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var testEnv = Env{Roots: []string{"/proj", "/proj-wt/feature"}, ProjectDir: "/proj", Home: "/home/u", Binary: "custodian"}

func decideRaw(raw []byte) Result {
	in, err := Parse(raw)
	if err != nil {
		in = nil
	}
	return Decide(in, raw, testEnv)
}

// TestDecideFixtures runs every hook input under testdata/hook: one per
// event and tool, and the bad inputs.
func TestDecideFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/hook/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var fx struct {
				Input json.RawMessage `json:"input"`
				Want  struct {
					Decision string         `json:"decision"`
					Reason   []string       `json:"reason"`
					Command  string         `json:"command"`
					Keep     map[string]any `json:"keep"`
					Event    string         `json:"event"`
					Context  []string       `json:"context"`
					Exit     int            `json:"exit"`
					Stderr   string         `json:"stderr"`
				} `json:"want"`
			}
			if err := json.Unmarshal(b, &fx); err != nil {
				t.Fatal(err)
			}
			got := decideRaw(fx.Input)
			w := fx.Want
			if got.Exit != w.Exit {
				t.Fatalf("exit %d, want %d (stderr %q)", got.Exit, w.Exit, got.Stderr)
			}
			if !strings.Contains(got.Stderr, w.Stderr) {
				t.Errorf("stderr %q, want it to contain %q", got.Stderr, w.Stderr)
			}
			if w.Event != "" {
				if got.Output == nil || got.Output.HookSpecificOutput.HookEventName != w.Event {
					t.Fatalf("output %+v, want event %s", got.Output, w.Event)
				}
				for _, s := range w.Context {
					if !strings.Contains(got.Output.HookSpecificOutput.AdditionalContext, s) {
						t.Errorf("additionalContext lacks %q", s)
					}
				}
				return
			}
			if got.Decision() != w.Decision {
				t.Fatalf("decision %q, want %q (%+v)", got.Decision(), w.Decision, got.Output)
			}
			if got.Decision() == "" && got.Exit == 0 && got.Output != nil {
				t.Errorf("an allowed call prints nothing, got %+v", got.Output)
			}
			if got.Output == nil {
				return
			}
			hso := got.Output.HookSpecificOutput
			if hso.HookEventName != "PreToolUse" {
				t.Errorf("hookEventName %q", hso.HookEventName)
			}
			for _, s := range w.Reason {
				if !strings.Contains(hso.PermissionDecisionReason, s) {
					t.Errorf("reason %q lacks %q", hso.PermissionDecisionReason, s)
				}
			}
			if w.Command != "" {
				if hso.UpdatedInput["command"] != w.Command {
					t.Errorf("updatedInput.command = %q, want %q", hso.UpdatedInput["command"], w.Command)
				}
				for k, v := range w.Keep {
					if b1, _ := json.Marshal(hso.UpdatedInput[k]); string(b1) != mustJSON(v) {
						t.Errorf("updatedInput.%s = %s, want %s", k, b1, mustJSON(v))
					}
				}
			}
			// The answer is valid JSON of Claude Code's shape.
			out, err := json.Marshal(got.Output)
			if err != nil || !strings.HasPrefix(string(out), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":`) {
				t.Errorf("output %s (%v)", out, err)
			}
		})
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestDecideNotJSON(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		exit int
	}{
		{`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/proj/.impl/manifest.json"`, 2},
		{`not json at all: rm .asdd/state/journal.ndjson`, 2},
		{`not json at all`, 0},
		{``, 0},
		{`[1,2]`, 0},
	} {
		got := decideRaw([]byte(tc.raw))
		if got.Exit != tc.exit || got.Stderr == "" || got.Output != nil {
			t.Errorf("%q: exit %d stderr %q output %+v, want exit %d and a reason on stderr", tc.raw, got.Exit, got.Stderr, got.Output, tc.exit)
		}
	}
}

func bashDecision(cmd, cwd string) Result {
	ti, _ := json.Marshal(map[string]any{"command": cmd})
	in := &Input{HookEventName: "PreToolUse", ToolName: "Bash", Cwd: cwd, ToolInput: ti}
	return Decide(in, nil, testEnv)
}

// TestBashWrites is the table of shell idioms: every write of a managed
// file is denied, reads and unrelated commands pass.
func TestBashWrites(t *testing.T) {
	deny := []struct{ cmd, cwd string }{
		{`echo '{}' > .impl/manifest.json`, "/proj"},
		{`echo x >> /proj/.asdd/state/journal.ndjson`, "/tmp"},
		{`echo x >| .agents/tmp/state.json`, "/proj"},
		{`make &> .workflow/.cycle/c1.json`, "/proj"},
		{`make &>> .workflow/.cycle/c1.progress/coordination/discoveries.ndjson`, "/proj"},
		{`cat > ".impl/manifest.json" <<'EOF'
{"tasks":[]}
EOF`, "/proj"},
		{`jq . x.json | tee .impl/manifest.json`, "/proj"},
		{`jq . x.json | tee -a /dev/null '.asdd/state/manifest.json'`, "/proj"},
		{`mv /tmp/m.json .impl/manifest.json`, "/proj"},
		{`mv .impl/manifest.json /tmp/backup.json`, "/proj"},
		{`cp /tmp/manifest.json .impl/`, "/proj"},
		{`cp -f /tmp/x .agents/tmp/state.json`, "/proj"},
		{`cp -t .asdd/state journal.ndjson`, "/proj"},
		{`sed -i 's/pending/passed/' .impl/manifest.json`, "/proj"},
		{`sed -i.bak -e 's/a/b/' .impl/manifest.json`, "/proj"},
		{`sed --in-place 's/a/b/' .asdd/state/manifest.json`, "/proj"},
		{`perl -pi -e 's/a/b/' .agents/tmp/state.json`, "/proj"},
		{`rm .asdd/state/.lock`, "/proj"},
		{`rm -rf .asdd`, "/proj"},
		{`rm -rf .`, "/proj"},
		{`rm -f .workflow/.cycle/*.json`, "/proj"},
		{`rm .impl/*`, "/proj"},
		{`truncate -s 0 .impl/manifest.json`, "/proj"},
		{`dd if=/dev/zero of=.asdd/state/manifest.json bs=1 count=1`, "/proj"},
		{`echo x > "$CLAUDE_PROJECT_DIR/.impl/manifest.json"`, "/anywhere"},
		{`echo x > ${CLAUDE_PROJECT_DIR}/.asdd/state/manifest.json`, "/anywhere"},
		{`echo x > "$PWD/.impl/manifest.json"`, "/proj"},
		{`echo x > ~/../../proj/.impl/manifest.json`, "/tmp"},
		{`echo x > ../.impl/manifest.json`, "/proj/src"},
		{`cd .impl && echo '{}' > manifest.json`, "/proj"},
		{`cd /proj/.asdd/state; rm journal.ndjson`, "/"},
		{`cd "$SOMEWHERE" && echo '{}' > manifest.json`, "/proj"},
		{`F=.impl/manifest.json; echo '{}' > $F`, "/proj"},
		{`echo '{}' > $UNKNOWN/.impl/manifest.json`, "/proj"},
		{`echo '{}' > "$(git rev-parse --show-toplevel)/.agents/tmp/state.json"`, "/proj"},
		{`bash -c "echo x > .impl/manifest.json"`, "/proj"},
		{`sh -c 'rm -f .asdd/state/journal.ndjson'`, "/proj"},
		{`eval "rm .impl/manifest.json"`, "/proj"},
		{`sudo -u root tee .impl/manifest.json < /tmp/x`, "/proj"},
		{`env A=1 rm .asdd/state/manifest.json`, "/proj"},
		{`find .asdd/state -name '*.json' -delete`, "/proj"},
		{`find . -exec touch {} +`, "/proj"},
		{`python3 -c "open('.impl/manifest.json','w').write('{}')"`, "/proj"},
		{`node -e "require('fs').writeFileSync('.agents/tmp/state.json','{}')"`, "/proj"},
		{`git checkout -- .impl/manifest.json`, "/proj"},
		{`for f in .workflow/.cycle/*.json; do : > "$f"; done`, "/proj"},
		{`ln -sf /tmp/x .impl/manifest.json`, "/proj"},
		{`yq -i '.a = 1' .asdd/config.yaml`, "/proj"},
		{`sort -o .impl/manifest.json x`, "/proj"},
		{`touch .asdd/state/manifest.json`, "/proj"},
		{`chmod 000 .asdd/state/manifest.json`, "/proj"},
		{`exec 3> .impl/manifest.json`, "/proj"},
		{`echo x | sponge .agents/tmp/state.json`, "/proj"},
		{`bash -c "bash scripts/task-manifest.sh --init"`, "/proj"},
		{`echo x > /proj-wt/feature/.impl/manifest.json`, "/proj-wt/feature"},
		{`(cd /tmp); echo x > .impl/manifest.json`, "/proj"},
		{`echo x >> docs/agent-failure-log.md`, "/proj"},
		{`rm .asdd/escalations/ESC-1.md`, "/proj"},
		{`source ./scripts/reset-state.sh .asdd/state`, "/proj"},
		{`vim .impl/manifest.json`, "/proj"},
		{`echo x > .agents/tmp/state.json.lock`, "/proj"},
		{`xargs rm < list.txt; rm .impl/journal.ndjson`, "/proj"},
		{`ls .impl/manifest.json | xargs rm -f`, "/proj"},
		{`find . -name 'state.json' | xargs -I{} cp /tmp/x {}`, "/proj"},
		{`grep -l tasks .impl/* | while read f; do rm "$f"; done`, "/proj"},
	}
	for _, tc := range deny {
		got := bashDecision(tc.cmd, tc.cwd)
		if got.Decision() != "deny" {
			t.Errorf("%q in %s: decision %q, want deny (%+v)", tc.cmd, tc.cwd, got.Decision(), got)
		} else if r := got.Output.HookSpecificOutput.PermissionDecisionReason; !strings.Contains(r, "custodian") {
			t.Errorf("%q: reason names no door: %s", tc.cmd, r)
		}
	}
	allow := []struct{ cmd, cwd string }{
		{`cat .impl/manifest.json`, "/proj"},
		{`jq '.tasks | length' .impl/manifest.json`, "/proj"},
		{`jq -r .n .agents/tmp/state.json > /tmp/n.txt`, "/proj"},
		{`grep -c passed .impl/manifest.json && head -5 .asdd/state/journal.ndjson`, "/proj"},
		{`sha256sum .asdd/state/manifest.json`, "/proj"},
		{`ls -la .asdd/state`, "/proj"},
		{`git diff .impl/manifest.json; git log -- .asdd/config.yaml`, "/proj"},
		{`custodian impl --update-status --task-id 1.1 --status passed`, "/proj"},
		{`custodian apply --key .agents/tmp/state.json --jq '.n += 1'`, "/proj"},
		{`go test ./... > /tmp/out.txt 2>&1`, "/proj"},
		{`echo hello > notes.txt`, "/proj"},
		{`rm -rf build/ && mkdir build`, "/proj"},
		{`cp README.md docs/`, "/proj"},
		{`sed -i 's/a/b/' src/main.go`, "/proj"},
		{`sed 's/a/b/' .impl/manifest.json > /tmp/copy.json`, "/proj"},
		{`echo x > /elsewhere/.impl/manifest.json`, "/proj"},
		{`echo x > .asdd/specs/SLICE-001/requirements.md`, "/proj"},
		{`find .asdd -name '*.md'`, "/proj"},
		{`echo done 2>&1 >&2`, "/proj"},
		{`ls ~`, "/proj"},
		{`diff <(jq -S . .impl/manifest.json) <(jq -S . /tmp/m.json)`, "/proj"},
		{`awk '{print $1}' .asdd/state/journal.ndjson`, "/proj"},
		{`cp .impl/manifest.json /tmp/backup.json`, "/proj"},
		{`ls .impl/manifest.json | xargs cat`, "/proj"},
		{`find src -name '*.go' | xargs rm -f`, "/proj"},
		{`for f in *.tmp; do rm "$f"; done`, "/proj"},
	}
	for _, tc := range allow {
		if got := bashDecision(tc.cmd, tc.cwd); got.Decision() != "" {
			t.Errorf("%q in %s: decision %q, want no answer (%+v)", tc.cmd, tc.cwd, got.Decision(), got.Output.HookSpecificOutput)
		}
	}
}

func TestBashRewrite(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{`bash /plug/scripts/task-manifest.sh --summary`, `custodian impl --summary`},
		{`/plug/scripts/task-manifest.sh --get-task --task-id "1.2"`, `custodian impl --get-task --task-id "1.2"`},
		{`cd /proj && bash "${CLAUDE_PLUGIN_ROOT}/skills/impl-strategy/scripts/task-manifest.sh" --add-task --task-id 1.1 --phase 1 --description "Build it"`,
			`cd /proj && custodian impl --add-task --task-id 1.1 --phase 1 --description "Build it"`},
		{`S=$(bash task-manifest.sh --get-plan-path); echo "$S"`, `S=$(custodian impl --get-plan-path)
echo "$S"`},
	} {
		got := bashDecision(tc.cmd, "/proj")
		if got.Decision() != "allow" || got.Output.HookSpecificOutput.UpdatedInput["command"] != tc.want {
			t.Errorf("%q: %s %+v, want allow with %q", tc.cmd, got.Decision(), got.Output, tc.want)
		}
	}
	// A rewrite does not launder a write elsewhere in the command.
	if got := bashDecision(`bash task-manifest.sh --summary > .impl/manifest.json`, "/proj"); got.Decision() != "deny" {
		t.Errorf("rewrite with a write: %s", got.Decision())
	}
}

func TestClassify(t *testing.T) {
	for rel, want := range map[string]Kind{
		".asdd/state/manifest.json": ASDD, ".asdd/state/journal.ndjson": ASDD, ".asdd/state/journal.1-100.ndjson": ASDD,
		".asdd/state/.lock": ASDD, ".asdd/state/custodian.sock": ASDD, ".asdd/state/manifest.json.corrupt-1": ASDD,
		".asdd/escalations/E-1.md": ASDD, "docs/agent-failure-log.md": ASDD, ".asdd/config.yaml": Config,
		".impl/manifest.json": Impl, ".impl/manifest.json.tmp": Impl, ".impl/journal.ndjson": Impl, ".impl/journal.000000000001-000000000004.ndjson": Impl,
		".impl/.lock": Impl, ".impl/plan.md": NotManaged, ".impl/sub/manifest.json": NotManaged,
		".agents/tmp/state.json": AgentState, ".agents/tmp/state.json.lock": AgentState, ".agents/tmp/.state.lock": AgentState,
		".agents/tmp/state.journal.ndjson": AgentState, ".agents/tmp/other.json": NotManaged,
		".workflow/.cycle/c1.json": Cycle, ".workflow/.cycle/c1.progress/coordination/discoveries.ndjson": Cycle,
		".workflow/other/x.json": NotManaged, ".asdd/specs/S-1/requirements.md": NotManaged, "src/main.go": NotManaged,
		"./.impl//manifest.json": Impl,
		// The chain's anchor and the marks (store/file).
		".impl/.head": Impl, ".impl/.marks": Impl, ".agents/tmp/.state.head": AgentState,
		".asdd/state/.head": ASDD, ".workflow/.cycle/.c1.head": Cycle, ".impl/.other.head": NotManaged,
	} {
		if got := Classify(rel); got != want {
			t.Errorf("Classify(%q) = %d, want %d", rel, got, want)
		}
	}
}

// FuzzAnalyzeBash: the analyser never panics, and a command that writes a
// managed file stays denied when anything is appended to it.
func FuzzAnalyzeBash(f *testing.F) {
	for _, s := range []string{
		`echo x > .impl/manifest.json`, `tee .asdd/state/manifest.json`, `mv a .agents/tmp/state.json`,
		`sed -i s/a/b/ .impl/manifest.json`, `rm -rf .asdd/state`, `truncate -s0 .workflow/.cycle/c.json`,
		`dd of=.impl/manifest.json`, `cp x "$CLAUDE_PROJECT_DIR"/.impl/manifest.json`, `cd .impl; > manifest.json`,
		`bash -c 'echo > ~/x'`, `bash task-manifest.sh --summary`, `cat .impl/manifest.json`, `echo $((1+2)) &>> log`,
		`f() { rm "$1"; }; f .impl/manifest.json`, `tee -a .asdd/state/journal.ndjson <<< x`, `sed -Ei.bak 's/a/b/' .impl/manifest.json`,
		`find .workflow/.cycle -delete`, `cp -t .impl manifest.json`, `F=~/x; cd "$F" && : > state.json`, `echo > "${CLAUDE_PROJECT_DIR}"/.agents/tmp/state.json`,
		`python3 -c 'open(".impl/manifest.json","w")'`, `for f in .impl/*; do rm "$f"; done`, `a=$(cat <<EOF
x
EOF
)`,
		`tee {/dev/null,.impl/manifest.json}`, `cd a; cd b; cd c; cd d; echo > x`, `git stash -u`, `custodian approve S --role TL`,
		`F=/tmp/x; read F; echo > $F`, `ln -s . r && echo > r/.impl/manifest.json`, `find . -exec sh -c 'x' \\;`,
		`tar -xf a.tar`, `echo {a,b}{c,d}{e,f}`, `A=x; A=$A$A; echo > $A`,
	} {
		f.Add(s)
	}
	env := PathEnv{Cwd: "/proj", Home: "/home/u", ProjectDir: "/proj", Roots: []string{"/proj"}}
	f.Fuzz(func(t *testing.T, cmd string) {
		res, err := AnalyzeBash(cmd, env, "custodian")
		if err != nil {
			return
		}
		// It answers within its budget: past it, it stops and denies.
		if !res.Exhausted && res.Steps > MaxSteps {
			t.Errorf("%q: %d steps, over the budget of %d, not exhausted", cmd, res.Steps, MaxSteps)
		}
		if res.Exhausted {
			if got := bashIn(cmd, "/proj", Env{Roots: env.Roots, ProjectDir: "/proj", Home: "/home/u"}); got.Decision() != "deny" {
				t.Errorf("%q: budget exhausted, decision %q", cmd, got.Decision())
			}
			return
		}
		// (A final \ would join the line put after; a NUL ends an argument.)
		if len(res.Writes) > 0 && !strings.HasSuffix(cmd, "\\") && !strings.ContainsRune(cmd, 0) {
			// A write stays found whatever is put around it: a command
			// before or after, a subshell, a bash -c string.
			for _, wrapped := range []string{
				"true\n" + cmd,
				cmd + "\ntrue",
				"(\n" + cmd + "\n)",
				"bash -c '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'",
			} {
				more, err := AnalyzeBash(wrapped, env, "custodian")
				if err == nil && len(more.Writes) == 0 {
					t.Errorf("%q: writes %v vanished in %q", cmd, res.Writes, wrapped)
				}
			}
		}
		if res.Rewritten != "" {
			if _, err := AnalyzeBash(res.Rewritten, env, "custodian"); err != nil {
				t.Errorf("%q rewritten to %q which does not parse: %v", cmd, res.Rewritten, err)
			}
		}
	})
}

// BenchmarkDecideUnrelated measures the hook's decision for an unrelated
// Bash call (the common case).
func BenchmarkDecideUnrelated(b *testing.B) {
	raw := []byte(`{"session_id":"s","transcript_path":"/t","cwd":"/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./internal/... -run TestX -count=1 2>&1 | tail -20","description":"run tests"},"tool_use_id":"toolu_1"}`)
	b.ReportAllocs()
	for b.Loop() {
		if r := decideRaw(raw); r.Output != nil || r.Exit != 0 {
			b.Fatal(r)
		}
	}
}

// BenchmarkRunUnrelated is the whole door for an unrelated Bash call (read
// stdin, find the project on disk, decide, answer nothing), reporting the
// 99th percentile of its latency.
func BenchmarkRunUnrelated(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".asdd", "state"), 0o755); err != nil {
		b.Fatal(err)
	}
	sub := filepath.Join(dir, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"session_id":"s","cwd":"` + sub + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./... -run TestX 2>&1 | tail -20"}}`)
	var times []time.Duration
	var out, errb bytes.Buffer
	for b.Loop() {
		out.Reset()
		t0 := time.Now()
		if code := Run("", bytes.NewReader(raw), &out, &errb); code != 0 || out.Len() != 0 {
			b.Fatalf("exit %d, output %q", code, out.String())
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}
