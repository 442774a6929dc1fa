package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func bashIn(cmd, cwd string, env Env) Result {
	ti, _ := json.Marshal(map[string]any{"command": cmd})
	return Decide(&Input{HookEventName: "PreToolUse", ToolName: "Bash", Cwd: cwd, ToolInput: ti}, nil, env)
}

func reasonOf(r Result) string {
	if r.Output == nil || r.Output.HookSpecificOutput == nil {
		return ""
	}
	return r.Output.HookSpecificOutput.PermissionDecisionReason
}

// TestUnknownWritersAreDenied: writers the analyser used to let through,
// and any program it does not know that names a managed path (or a
// directory holding one, or a word that may expand to one), are denied.
func TestUnknownWritersAreDenied(t *testing.T) {
	for _, cmd := range []string{
		// xxd writes its second operand, -r or not.
		`xxd -r dump.hex .asdd/state/manifest.json`,
		`xxd -r -p dump.hex .impl/manifest.json`,
		// editors, and their commands.
		`view -es -c 'w! .impl/manifest.json' README.md`,
		`vim -es -c 'w! .asdd/config.yaml' -c q notes.txt`,
		`ex -sc 'wq! .agents/tmp/state.json' x`,
		// interpreters' inline code, and their stdin.
		`perl -e 'open F, ">", ".asdd/config.yaml"; print F "min: 0.1"'`,
		`perl -pi -e 's/0.85/0.70/' .asdd/config.yaml`,
		`ruby -e 'File.write(".impl/manifest.json", "{}")'`,
		"python3 <<'EOF'\nopen('.impl/manifest.json','w').write('{}')\nEOF",
		`echo "open('.asdd/state/manifest.json','w')" | python3`,
		`bash <<< 'rm .impl/manifest.json'`,
		// sed scripts that write.
		`sed -e 'w .impl/manifest.json' /tmp/x`,
		`sed -n 'w .asdd/state/manifest.json' /tmp/x`,
		`sed 's/a/b/w .agents/tmp/state.json' /tmp/x`,
		`cd .impl && sed -n 'w manifest.json' /tmp/x`,
		// find -exec runs a command: its own arguments count.
		`find /tmp -name x -exec cp {} .impl/manifest.json \;`,
		`find /tmp -maxdepth 0 -exec sh -c 'echo > .asdd/state/manifest.json' \;`,
		`find . -name '*.json' -exec sed -i s/a/b/ {} +`,
		`find /tmp -fprint .impl/manifest.json`,
		// brace expansion and field splitting.
		`tee {/dev/null,.impl/manifest.json} < /tmp/x`,
		`echo x | tee /dev/null{,/../../proj/.impl/manifest.json}`,
		`cp /tmp/x .impl/{notes.md,manifest.json}`,
		`F="/dev/null .impl/manifest.json"; tee $F < /tmp/x`,
		`rm -f .asdd/state/{manifest,journal}.*`,
		// links: a second name to write a managed file by.
		`ln -s .impl/manifest.json m && echo '{}' > m`,
		`ln -s /proj/.asdd/state s; echo x > s/manifest.json`,
		`ln -s . root && echo x > root/.impl/manifest.json`,
		`ln .impl/manifest.json /tmp/m`,
		`mkdir sub && ln -s ../.impl/manifest.json sub/m && echo '{}' > sub/m`,
		`ln -s ../.asdd sub/ && echo x > sub/.asdd/state/manifest.json`,
		`cp -l .agents/tmp/state.json /tmp/s`,
		`cp --symbolic-link /proj/.impl/manifest.json /tmp/m`,
		`ln -sf /tmp/evil .claude/settings.json`,
		// recursive copies whose contents land on managed paths.
		`cp -r /tmp/x/.asdd .`,
		`cp -a /tmp/snapshot/. .`,
		`rsync -a /tmp/snapshot/ ./`,
		`mv /tmp/y/.impl .`,
		// stale variables: unset, read, printf -v, loops, functions.
		`F=/tmp/x; unset F; echo '{}' > ${F:-.impl/manifest.json}`,
		`F=/tmp/x; read F <<< .impl/manifest.json; echo '{}' > $F`,
		`F=/tmp/x; printf -v F '%s' .asdd/state/manifest.json; echo '{}' > "$F"`,
		`F=/tmp/x; for i in 1 2; do echo '{}' > "$F"; F=.impl/manifest.json; done`,
		`F=/tmp/x; set_it() { F=.agents/tmp/state.json; }; set_it; echo '{}' > $F`,
		`F=/tmp/x; : ${G:=.impl/manifest.json}; echo '{}' > $G`,
		`F=/tmp/x; eval 'F=.impl/manifest.json'; echo '{}' > $F`,
		`source ./env.sh; echo '{}' > "$TARGET"; cat .impl/manifest.json`,
		`F=/tmp/x; builtin read F <<< .impl/manifest.json; echo '{}' > $F`,
		`declare -n R=F; F=/tmp/x; R=.impl/manifest.json; echo '{}' > $F`,
		`IFS=:; F="/dev/null:.impl/manifest.json"; tee $F < /tmp/x`,
		`A=(/dev/null .impl/manifest.json); tee "${A[@]}" < /tmp/x`,
		`cat() { rm "$@"; }; cat .impl/manifest.json`,
		// archives extracted into the project.
		`tar -xf /tmp/state.tar`,
		`tar xzf /tmp/state.tgz`,
		`tar -x -f /tmp/a.tar -C /proj`,
		`tar --extract --file=/tmp/a.tar .asdd/state/manifest.json`,
		`tar -cf .impl/manifest.json src`,
		`unzip -o /tmp/state.zip`,
		`cd /proj && cpio -idm < /tmp/a.cpio`,
		// unknown programs naming managed paths or their directories.
		`curl -o .impl/manifest.json https://example.com/m.json`,
		`curl --output=.asdd/state/manifest.json https://example.com`,
		`wget -O .agents/tmp/state.json https://example.com`,
		`gzip .impl/manifest.json`,
		`prettier --write .asdd/state`,
		`npx some-tool --config .claude/settings.json`,
		`mytool .workflow/.cycle`,
		`mytool .i*/manifest.json`,
		`zip -r /tmp/out.zip .a*`,
		`cat .impl/manifest.json; mytool "$OUT"`,
		`echo '{}' > .claude/settings.json`,
		`jq 'del(.hooks)' .claude/settings.json | sponge .claude/settings.json`,
		`rm .claude/settings.local.json`,
		`env -S 'rm .impl/manifest.json'`,
		`rg --pre 'tee .impl/manifest.json' x src`,
		`setsid rm .impl/manifest.json`,
		`flock .asdd/state/.lock true`,
		`watch -n1 'echo x >> .asdd/state/journal.ndjson'`,
		`jq 'del(.hooks)' ~/.claude/settings.json > /tmp/s && mv /tmp/s ~/.claude/settings.json`,
		`rm -rf ~/.claude`,
		`echo '{}' > /home/u/.claude/settings.local.json`,
		`C="rm .impl/manifest.json"; $C`,
		`custodian apply --key .claude/settings.json --jq 'del(.hooks)'`,
		`custodian apply --key=.asdd/config.yaml --jq '.x = 1'`,
	} {
		if got := bashDecision(cmd, "/proj"); got.Decision() != "deny" {
			t.Errorf("%q: decision %q, want deny", cmd, got.Decision())
		}
	}
}

// TestReadersAndUnrelatedCommandsPass: reading managed files, and
// commands that name none, are allowed.
func TestReadersAndUnrelatedCommandsPass(t *testing.T) {
	for _, cmd := range []string{
		`cat .asdd/state/manifest.json`,
		`jq . .impl/manifest.json`,
		`jq -r '.slices | keys[]' .asdd/state/manifest.json | head`,
		`grep -n min .asdd/config.yaml`,
		`head -3 .asdd/state/journal.ndjson; tail -1 .impl/journal.ndjson`,
		`ls -la .asdd .impl .claude`,
		`cat .claude/settings.json`,
		`git diff -- .asdd/config.yaml; git log --oneline -- .impl/manifest.json; git show HEAD:.impl/manifest.json`,
		`git status`,
		`git stash list`,
		`git stash show -p stash@{0}`,
		`git add src && git commit -m 'wip'`,
		`git checkout -b feature/x`,
		`git switch -c feature/y`,
		`git restore --staged .`,
		`git rm --cached notes.md`,
		`git clean -n`,
		`git stash push -- src/main.go`,
		`git checkout -- src/main.go`,
		`git reset HEAD~1`,
		`custodian status`,
		`custodian propose SLICE-001 --agent spec --confidence 0.9 --artifact spec=spec.md`,
		`custodian slice add SLICE-002 --title x`,
		`custodian heartbeat --agent spec`,
		`custodian unlock SLICE-001 --holder me`,
		`custodian approve --help`,
		`custodian -C /proj status --json`,
		`go run ./cmd/custodian status`,
		`custodian get .asdd/state/manifest.json | jq .revision`,
		`custodian apply --key .agents/tmp/state.json --jq '.n += 1'`,
		`custodian apply --key=.workflow/.cycle/c1.json --jq '.status = "done"'`,
		`xxd .asdd/state/manifest.json | head`,
		`sed -n '1,5p' .asdd/config.yaml`,
		`sed 's/a/b/' .impl/manifest.json > /tmp/copy.json`,
		`find .asdd -name '*.md' -exec cat {} \;`,
		`find . -name '*.go' -exec grep -l TODO {} +`,
		`tar -czf /tmp/backup.tgz .asdd/state`,
		`tar -tf /tmp/state.tar`,
		`tar -xf /tmp/deps.tar -C /tmp/deps`,
		`unzip -l /tmp/state.zip`,
		`go test ./... -run TestX`,
		`pytest .`,
		`docker build -t x .`,
		`cp -r /tmp/x/src .`,
		`ln -s /tmp/cache .cache`,
		`tee {/dev/null,/tmp/out.txt} < /tmp/x`,
		`F=/tmp/out.txt; echo x > "$F"`,
		`for f in a b; do echo "$f" > "/tmp/$f.txt"; done`,
		`vim src/main.go`,
		`python3 scripts/check.py`,
		`perl -ne 'print if /x/' src/main.go`,
		`echo {} > "$(mktemp)"`,
		`zip -r /tmp/src.zip src *.go`,
		`cat ~/.claude/settings.json`,
		`rg --pre ./scripts/pdftotext.sh invoice docs`,
		`rg -n tasks .impl/manifest.json`,
		`mytool ~`,
		`echo x > ~/.claude/notes.md`,
		`mytool "$OUT"`,
		`cat .impl/manifest.json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"`,
		`jq . .asdd/state/manifest.json | node -e "let s='';process.stdin.on('data',d=>s+=d)"`,
		`jq -r .tasks[].id .impl/manifest.json | python3 scripts/report.py`,
	} {
		if got := bashDecision(cmd, "/proj"); got.Decision() != "" {
			t.Errorf("%q: decision %q, want no answer (%s)", cmd, got.Decision(), reasonOf(got))
		}
	}
}

// TestGitRewindsAreDenied: git commands that would put managed files back
// to another revision are denied; moves to another commit only when git
// tracks a state document.
func TestGitRewindsAreDenied(t *testing.T) {
	for _, cmd := range []string{
		`git stash`, `git stash -u`, `git stash push -u -m wip`, `git stash save wip`, `git stash pop`,
		`git stash apply stash@{0}`, `git stash --include-untracked`, `git stash branch b`,
		`git stash push -- .asdd/state`,
		`git reset --hard`, `git reset --hard HEAD~1`, `git reset --keep HEAD~1`, `git -C /proj reset --merge`,
		`git clean -f`, `git clean -fd`, `git clean -fdx`, `git clean -xf .asdd`,
		`git checkout -- .`, `git checkout .`, `git checkout HEAD~3 -- .asdd/state/manifest.json`,
		`git checkout .impl/manifest.json`, `git checkout main -- .workflow/.cycle`,
		`git restore .`, `git restore --source=HEAD~2 .asdd/config.yaml`, `git restore -s HEAD~1 -- .impl`,
		`git restore --staged --worktree .agents/tmp/state.json`,
		`git rm .impl/manifest.json`, `git rm -r .asdd`, `git mv /tmp/x .impl/manifest.json`, `git mv .asdd/state old`,
		`git checkout main`, `git checkout HEAD~1`, `git checkout -`, `git switch main`, `git switch --orphan x`,
		`git checkout -b hotfix origin/main`, `git checkout -f`,
		`git merge other`, `git pull`, `git rebase main`, `git cherry-pick abc123`, `git revert HEAD`, `git am < x.mbox`,
		`git read-tree -u -m HEAD~1`, `git checkout-index -f -a`,
		`cd src && git checkout -- ..`,
		"git apply <<'EOF'\n--- a/.impl/manifest.json\n+++ b/.impl/manifest.json\nEOF",
		`git apply --directory=.asdd fix.patch`,
		`git -c alias.x='!rm .impl/manifest.json' x`,
		`git -C .asdd checkout -- state`,
		`git -C /proj/.impl restore manifest.json`,
		`cd /tmp && GIT_WORK_TREE=/proj GIT_DIR=/proj/.git git reset --hard`,
		`cd /tmp && git --work-tree=/proj --git-dir=/proj/.git checkout -- .`,
	} {
		got := bashDecision(cmd, "/proj")
		if got.Decision() != "deny" {
			t.Errorf("%q: decision %q, want deny", cmd, got.Decision())
			continue
		}
		if r := reasonOf(got); !strings.Contains(r, "custodian") {
			t.Errorf("%q: reason names no door: %s", cmd, r)
		}
	}
	// Outside the project git may do what it likes.
	for _, cmd := range []string{`git stash -u`, `git reset --hard`, `git clean -fdx`, `git checkout main`} {
		if got := bashDecision(cmd, "/elsewhere/repo"); got.Decision() != "" {
			t.Errorf("%q outside the project: decision %q", cmd, got.Decision())
		}
	}
}

// TestGitMovesWhenStateIsNotTracked: with the state documents out of git,
// moving to another commit rewinds nothing and passes; the commands that
// rewrite the working tree wholesale are still denied.
func TestGitMovesWhenStateIsNotTracked(t *testing.T) {
	env := testEnv
	asked := ""
	env.Tracked = func(root string) bool { asked = root; return false }
	for _, cmd := range []string{`git checkout main`, `git switch main`, `git pull`, `git rebase main`, `git merge other`} {
		if got := bashIn(cmd, "/proj/src", env); got.Decision() != "" {
			t.Errorf("%q, state untracked: decision %q (%s)", cmd, got.Decision(), reasonOf(got))
		}
	}
	if asked != "/proj" {
		t.Errorf("Tracked asked of %q, want /proj", asked)
	}
	for _, cmd := range []string{`git stash -u`, `git reset --hard`, `git clean -fdx`, `git checkout -- .`} {
		if got := bashIn(cmd, "/proj", env); got.Decision() != "deny" {
			t.Errorf("%q, state untracked: decision %q, want deny", cmd, got.Decision())
		}
	}
	env.Tracked = func(string) bool { return true }
	if got := bashIn(`git checkout main`, "/proj", env); got.Decision() != "deny" {
		t.Errorf("git checkout main, state tracked: %q", got.Decision())
	}
}

// TestGitApplyReadsThePatch: a patch file that changes a managed file is
// denied, one that does not passes.
func TestGitApplyReadsThePatch(t *testing.T) {
	env := testEnv
	env.ReadPatch = func(p string) ([]byte, error) {
		switch p {
		case "/proj/state.patch":
			return []byte("diff --git a/.asdd/state/manifest.json b/.asdd/state/manifest.json\n"), nil
		case "/proj/src.patch":
			return []byte("diff --git a/src/main.go b/src/main.go\n"), nil
		case "/proj/fifo":
			return nil, errors.New("not a regular file")
		}
		return nil, fs.ErrNotExist
	}
	for cmd, want := range map[string]string{
		`git apply state.patch`: "deny", `git apply src.patch`: "", `git apply --check state.patch`: "",
		`git apply < state.patch`: "deny", `patch -p1 < state.patch`: "deny", `patch -p1 -i state.patch`: "deny",
		`patch -p1 < src.patch`: "", `patch src/main.go src.patch`: "",
		`git apply fifo`: "deny", `git apply missing.patch`: "", `git am state.patch`: "deny",
	} {
		if got := bashIn(cmd, "/proj", env); got.Decision() != want {
			t.Errorf("%q: decision %q, want %q (%s)", cmd, got.Decision(), want, reasonOf(got))
		}
	}
}

// TestHumanDecisionsAreDenied: the custodian's human decisions run
// through Bash are denied, naming who makes them and what to do instead.
func TestHumanDecisionsAreDenied(t *testing.T) {
	for _, cmd := range []string{
		`custodian approve SLICE-001 --role TL`,
		`custodian resolve SLICE-001 --action resume --role TL`,
		`custodian review SLICE-001 --role TL`,
		`custodian review --project --role PO`,
		`custodian rollback .asdd/state/manifest.json --to 38 --reason oops`,
		`custodian init --force`,
		`custodian repair .impl/manifest.json --keep journal --reason x`,
		`custodian rebuild --force`,
		`custodian migrate --to file`,
		`custodian unlock SLICE-001 --force --role TL`,
		`custodian unlock SLICE-001 --force=true --role TL`,
		`custodian assumption correct SLICE-001 2 --value x`,
		`custodian hook uninstall --claude`,
		`custodian hook install --claude`,
		`/usr/local/bin/custodian -C /proj --json approve SLICE-001 --role TL`,
		`custodian --server http://127.0.0.1:1 approve SLICE-001`,
		`sudo custodian rollback x --to 1`,
		`bash -c 'custodian approve SLICE-001 --role TL'`,
		`CUSTODIAN_ACTOR=tl custodian approve SLICE-001`,
		`custodian $(echo approve) SLICE-001`,
		`go run ./cmd/custodian approve SLICE-001 --role TL`,
		`go run github.com/custodian-dev/custodian/cmd/custodian@latest rollback x --to 3`,
	} {
		got := bashDecision(cmd, "/proj")
		r := reasonOf(got)
		if got.Decision() != "deny" {
			t.Errorf("%q: decision %q, want deny", cmd, got.Decision())
			continue
		}
		for _, want := range []string{"human decision", "the human", "terminal", "Stop and tell the user", "custodian halt"} {
			if !strings.Contains(r, want) {
				t.Errorf("%q: reason lacks %q: %s", cmd, want, r)
			}
		}
	}
}

// TestUnknownTargetReasonSaysSo: a write whose target is computed at run
// time is denied with a reason that says the target could not be
// determined, not an empty path.
func TestUnknownTargetReasonSaysSo(t *testing.T) {
	for cmd, want := range map[string]string{
		`echo {} > $(echo .impl/manifest.json)`:              "computed by a command substitution",
		`echo {} > "$(cat /tmp/p)"; cat .impl/manifest.json`: "computed by a command substitution",
		`cat .asdd/state/manifest.json > "$OUT"`:             "$OUT",
	} {
		got := bashDecision(cmd, "/proj")
		r := reasonOf(got)
		if got.Decision() != "deny" || !strings.Contains(r, "could not be determined") || !strings.Contains(r, want) {
			t.Errorf("%q: %q %s, want deny saying the target could not be determined (%s)", cmd, got.Decision(), r, want)
		}
		if strings.Contains(r, " ( ") || strings.Contains(r, ": (") {
			t.Errorf("%q: the reason names an empty path: %s", cmd, r)
		}
	}
}

// TestSessionStartNamesOnlyAgentOperations: the protocol the agent is
// given lists its own operations and says the human makes the human
// decisions.
func TestSessionStartNamesOnlyAgentOperations(t *testing.T) {
	got := decideRaw([]byte(`{"hook_event_name":"SessionStart","source":"startup"}`))
	ctx := got.Output.HookSpecificOutput.AdditionalContext
	before, after, ok := strings.Cut(ctx, "The human makes the human decisions")
	if !ok {
		t.Fatalf("the context does not say who makes the human decisions:\n%s", ctx)
	}
	for _, human := range []string{"approve", "resolve", "review", "rollback", "repair", "rebuild"} {
		if strings.Contains(before, human) {
			t.Errorf("the agent's part of the context names %q:\n%s", human, before)
		}
		if !strings.Contains(after, human) {
			t.Errorf("the human decisions lack %q", human)
		}
	}
	for _, agent := range []string{"propose", "slice add", "heartbeat", "custodian impl", "state update", "cycle"} {
		if !strings.Contains(before, agent) {
			t.Errorf("the context lacks the agent operation %q", agent)
		}
	}
}

// TestManyCdsAreDecided: each cd used to double the directories the
// analyser tracked, so that 18 of them took the hook past its timeout and
// Claude Code let the call through. A thousand are decided, within the
// budget, and the write after them is still found.
func TestManyCdsAreDecided(t *testing.T) {
	cds := manyCds(1000)
	env := PathEnv{Cwd: "/proj", Home: "/home/u", ProjectDir: "/proj", Roots: []string{"/proj"}}
	for cmd, want := range map[string]string{
		cds + "echo '{}' > .impl/manifest.json":  "deny",
		cds + "echo hi > notes.txt":              "",
		cds + "cd /proj && rm .asdd/state/.lock": "deny",
	} {
		res, err := AnalyzeBash(cmd, env, "custodian")
		if err != nil {
			t.Fatal(err)
		}
		if res.Exhausted || res.Steps > MaxSteps {
			t.Errorf("%d bytes of cd: %d steps, exhausted %v", len(cmd), res.Steps, res.Exhausted)
		}
		if got := bashDecision(cmd, "/proj"); got.Decision() != want {
			t.Errorf("1,000 cds then %q: decision %q, want %q (%s)", cmd[len(cds):], got.Decision(), want, reasonOf(got))
		}
	}
}

// manyCds is n cds into distinct directories (each one doubled the set).
func manyCds(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "cd d%d; ", i)
	}
	return sb.String()
}

// TestBudgetExhaustedIsDenied: a command too large or too complex to
// analyse within the budget is denied, whatever it names.
func TestBudgetExhaustedIsDenied(t *testing.T) {
	for name, cmd := range map[string]string{
		"too long":         "echo " + strings.Repeat("x", MaxCommand),
		"too many steps":   strings.Repeat("echo $(echo $(echo a)); ", MaxCommand/32),
		"nested too deep":  strings.Repeat("$(", MaxNesting+1) + strings.Repeat(")", MaxNesting+1),
		"doubling strings": "A=xxxxxxxxxxxxxxxx; " + strings.Repeat("A=$A$A; ", 40) + "echo $A",
	} {
		res, err := AnalyzeBash(cmd, PathEnv{Cwd: "/proj", Roots: []string{"/proj"}}, "custodian")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := bashDecision(cmd, "/proj")
		switch name {
		case "doubling strings": // linear: the value is dropped, not doubled
			if res.Exhausted || got.Decision() != "" {
				t.Errorf("%s: exhausted %v, decision %q", name, res.Exhausted, got.Decision())
			}
		default:
			if !res.Exhausted || got.Decision() != "deny" || !strings.Contains(reasonOf(got), "budget") {
				t.Errorf("%s: exhausted %v (%d steps), decision %q %s", name, res.Exhausted, res.Steps, got.Decision(), reasonOf(got))
			}
		}
	}
}

// BenchmarkManyCds is the time of a command of 1,000 cds (it was
// exponential: 18 took over 10 s).
func BenchmarkManyCds(b *testing.B) {
	cmd := manyCds(1000) + "echo '{}' > .impl/manifest.json"
	b.ReportAllocs()
	for b.Loop() {
		if r := bashDecision(cmd, "/proj"); r.Decision() != "deny" {
			b.Fatal(r)
		}
	}
}
