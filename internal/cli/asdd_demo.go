package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

func init() { Register("demo", newDemoCmd) }

// demoStep is one agent run: write the artifact, then propose.
type demoStep struct {
	agent string
	score string
	want  int // expected exit code
}

// demoPipeline is one slice and the agents that work on it, in order.
type demoPipeline struct {
	slice, name string
	steps       []demoStep
}

func newDemoCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo [DIR]",
		Short: "Run a simulated ASDD pipeline: concurrent agent processes driving slices, then the board",
		Long: `Create a scratch project (DIR, or a new temporary directory) and run a simulated
pipeline: four slices, each driven by its own chain of agent processes (this
binary, re-invoked as "custodian propose", "heartbeat", "lock", …) running at
the same time. One slice reaches DONE; one is halted by the CCS floor
(cascading confidence failure); one is refused while another agent holds its
lease, then halted when two agents change the same artifact at once (the
conflict diff goes to the Tech Lead); one is halted by an agent below its
minimum and then resolved by the Tech Lead.
The board is printed at the end; the project is left in place to explore.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("demo: find this binary: %w", err)
			}
			dir := ""
			if len(args) == 1 {
				dir = args[0]
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if _, err := os.Stat(filepath.Join(dir, ".asdd")); err == nil {
					return reason.Usage("%s already holds an .asdd project; give an empty or new directory", dir)
				}
			} else if dir, err = os.MkdirTemp("", "custodian-demo-"); err != nil {
				return err
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			progress := app.Out
			if app.JSON {
				progress = app.Err
			}
			d := &demo{self: self, dir: dir, out: progress}
			if err := d.run(); err != nil {
				return err
			}
			fmt.Fprintln(progress)
			board := exec.Command(self, "-C", dir, "status")
			if app.JSON {
				board.Args = append(board.Args, "--json")
			}
			board.Stdout, board.Stderr = app.Out, app.Err
			if err := board.Run(); err != nil {
				return fmt.Errorf("demo: status: %w", err)
			}
			fmt.Fprintf(progress, "\nThe project is in %s. Look around:\n", dir)
			for _, c := range []string{"status", "slice show SLICE-002", "escalations --all", "history .asdd/state/manifest.json"} {
				fmt.Fprintf(progress, "  custodian -C %s %s\n", dir, c)
			}
			fmt.Fprintf(progress, "  cat %s\n", filepath.Join(dir, asdd.FailureLogPath))
			if len(args) == 0 {
				fmt.Fprintf(progress, "(a temporary directory: remove it when done)\n")
			}
			if d.failed > 0 {
				return fmt.Errorf("demo: %d agent runs did not behave as expected", d.failed)
			}
			return nil
		},
	}
	return cmd
}

type demo struct {
	self, dir string
	out       io.Writer
	mu        sync.Mutex
	failed    int
}

// custodian runs the binary as a separate process and returns its exit
// code and output.
func (d *demo) custodian(args ...string) (int, string) {
	cmd := exec.Command(d.self, append([]string{"-C", d.dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	return -1, err.Error()
}

func (d *demo) say(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
}

// must runs a setup command that has to succeed.
func (d *demo) must(args ...string) error {
	if code, out := d.custodian(args...); code != 0 {
		return fmt.Errorf("demo: custodian %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(out))
	}
	return nil
}

var demoArtifacts = map[string]string{
	"discovery": "intent", "spec": "requirements", "domain": "domain_model", "design": "design", "task_planning": "tasks",
}

// step runs one agent: heartbeat ACTIVE, write the artifact, propose,
// heartbeat IDLE. It reports what the custodian said.
func (d *demo) step(p demoPipeline, s demoStep) int {
	d.custodian("heartbeat", "--agent", s.agent, "--slice", p.slice, "--status", "ACTIVE")
	args := []string{"propose", "--agent", s.agent, "--slice", p.slice, "--score", s.score, "--json"}
	if name, ok := demoArtifacts[s.agent]; ok {
		rel := fmt.Sprintf(".asdd/specs/%s/%s.md", strings.ToLower(p.slice), name)
		content := fmt.Sprintf("# %s — %s\n\nWritten by the %s agent (confidence %s).\n", p.name, name, s.agent, s.score)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(d.dir, rel)), 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(d.dir, filepath.FromSlash(rel)), []byte(content), 0o644)
		}
		args = append(args, "--artifact", name+"="+rel)
	}
	if s.score < "0.95" {
		args = append(args, "--uncertainty", demoUncertainty[s.agent])
	}
	code, out := d.custodian(args...)
	d.custodian("heartbeat", "--agent", s.agent, "--status", "IDLE")
	mark := "ok"
	detail := ""
	var res struct {
		Revision uint64         `json:"revision"`
		Summary  string         `json:"summary"`
		Verdict  *reason.Error  `json:"verdict"`
		Error    *reason.Error  `json:"error"`
		Slice    map[string]any `json:"slice"`
	}
	_ = json.Unmarshal([]byte(out), &res)
	switch {
	case res.Verdict != nil:
		mark, detail = "HALTED", fmt.Sprintf("%s: %s", res.Verdict.Code, res.Verdict.Message)
	case res.Error != nil:
		mark, detail = "REJECTED", fmt.Sprintf("%s: %s", res.Error.Code, res.Error.Message)
	case code == 0:
		detail = fmt.Sprintf("revision %d: %s", res.Revision, res.Summary)
	default:
		detail = strings.TrimSpace(out)
	}
	if code != s.want {
		mark = "UNEXPECTED " + mark
		d.mu.Lock()
		d.failed++
		d.mu.Unlock()
	}
	d.say("  %-9s %-15s %-10s score %-5s exit %d  %s", p.slice, s.agent, mark, s.score, code, detail)
	return code
}

var demoUncertainty = map[string]string{
	"discovery":      "The token type is not in the domain model",
	"spec":           "The NFR for p95 latency is not specified in the requirements",
	"validation":     "The 'Settlement' entity has conflicting definitions in two bounded contexts",
	"domain":         "Two candidate aggregates for Settlement",
	"design":         "Caching strategy for settlement queries undecided",
	"task_planning":  "Migration order depends on an unreviewed schema",
	"implementation": "Retry semantics of the payment gateway are undocumented",
	"qa":             "Edge cases of the lockout policy are untested",
	"security":       "Dependency scan reports an unreviewed CVE",
	"devops":         "Canary thresholds are guesses",
	"observability":  "No SLO defined for the settlement export",
}

func (d *demo) run() error {
	d.say("Custodian demo: a simulated ASDD pipeline in %s\n", d.dir)
	if err := d.must("init", "--sprint", "2026-Q2-S3", "--goal", "Self-service onboarding"); err != nil {
		return err
	}
	pipelines := []demoPipeline{
		{"SLICE-001", "User Authentication Flow", []demoStep{
			{"discovery", "0.96", 0}, {"spec", "0.95", 0}, {"validation", "0.97", 0}, {"domain", "0.96", 0},
			{"design", "0.95", 0}, {"task_planning", "0.97", 0}, {"implementation", "0.95", 0}, {"qa", "0.97", 0},
			{"security", "0.98", 0}, {"devops", "0.97", 0}, {"observability", "0.96", 0}}},
		// Seed 004's worked example: each agent passes its own gate, but the CCS falls below 0.65.
		{"SLICE-002", "Settlement Reports", []demoStep{
			{"discovery", "0.90", 0}, {"spec", "0.88", 0}, {"validation", "0.91", 0}, {"design", "0.82", 3}}},
		// The spec agent finds the slice leased to the domain agent; later two
		// agents change the same artifact at once (see lockConflict).
		{"SLICE-003", "Notification Preferences", []demoStep{
			{"discovery", "0.93", 0}, {"spec", "0.92", 4}}},
		// Seed 000's example: Implementation Agent confidence 0.71 < threshold 0.75.
		{"SLICE-004", "Audit Trail", []demoStep{
			{"discovery", "0.95", 0}, {"spec", "0.96", 0}, {"validation", "0.95", 0}, {"design", "0.90", 0},
			{"implementation", "0.71", 3}}},
	}
	for _, p := range pipelines {
		if err := d.must("slice", "add", p.slice, "--name", p.name); err != nil {
			return err
		}
	}
	d.say("Four slices, four agent chains running at once (each line is a separate custodian process):\n")
	var wg sync.WaitGroup
	for _, p := range pipelines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.slice == "SLICE-003" {
				d.lockConflict(p)
				return
			}
			for _, s := range p.steps {
				if d.step(p, s) != 0 {
					return
				}
			}
		}()
	}
	wg.Wait()

	d.say("\nThe Tech Lead reads the escalation for SLICE-004 and approves a revised run:\n")
	code, out := d.custodian("resolve", "SLICE-004", "--role", "TL", "--by", "dana", "--rationale", "gateway retry semantics documented in the design", "--root-cause", "undocumented external API", "--action", "rerun")
	d.say("  %-9s %-15s %-10s %s", "SLICE-004", "TL", "RESOLVE", strings.TrimSpace(firstLine(out, code)))
	p4 := pipelines[3]
	for _, s := range []demoStep{{"implementation", "0.88", 0}, {"qa", "0.96", 0}, {"security", "0.97", 0}, {"devops", "0.96", 0}, {"observability", "0.95", 0}} {
		if d.step(p4, s) != 0 {
			break
		}
	}
	code, out = d.custodian("quick", "Fix typo in login header")
	d.say("\nQuick mode: %s", strings.TrimSpace(firstLine(out, code)))
	return nil
}

// lockConflict drives SLICE-003 into both kinds of conflict of seed 000:
// the spec agent finds the slice leased to the domain agent (SLICE_LOCKED)
// and retries once the lease is released; then the knowledge and domain
// agents, having read the same revision, change the glossary at once — no
// steering rule settles it, so the custodian blocks the slice and escalates
// the conflict diff to the Tech Lead.
func (d *demo) lockConflict(p demoPipeline) {
	if d.step(p, p.steps[0]) != 0 {
		return
	}
	code, out := d.custodian("lock", p.slice, "--holder", "domain", "--ttl", "1h", "--reason", "reworking the notification domain model")
	d.say("  %-9s %-15s %-10s %s", p.slice, "domain", "LOCK", firstLine(out, code))
	d.step(p, p.steps[1]) // SLICE_LOCKED
	code, out = d.custodian("unlock", p.slice, "--holder", "domain")
	d.say("  %-9s %-15s %-10s %s", p.slice, "domain", "UNLOCK", firstLine(out, code))
	for _, s := range []demoStep{{"spec", "0.92", 0}, {"validation", "0.96", 0}} {
		if d.step(p, s) != 0 {
			return
		}
	}
	var view struct{ Revision uint64 }
	_, out = d.custodian("--json", "slice", "show", p.slice)
	if json.Unmarshal([]byte(out), &view) != nil {
		return
	}
	base := fmt.Sprint(view.Revision)
	dir := ".asdd/specs/slice-003/"
	for _, f := range []string{"glossary-knowledge.md", "glossary-domain.md", "domain_model.md"} {
		_ = os.WriteFile(filepath.Join(d.dir, filepath.FromSlash(dir+f)), []byte("# "+f+"\n"), 0o644)
	}
	runs := [][]string{
		{"propose", "--agent", "knowledge", "--slice", p.slice, "--score", "0.96", "--base-revision", base,
			"--artifact", "glossary=" + dir + "glossary-knowledge.md"},
		{"propose", "--agent", "domain", "--slice", p.slice, "--score", "0.96", "--base-revision", base,
			"--artifact", "glossary=" + dir + "glossary-domain.md", "--artifact", "domain_model=" + dir + "domain_model.md"},
	}
	codes := make([]int, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, o := d.custodian(args...)
			codes[i] = c
			mark := "ok"
			if c != 0 {
				mark = "HALTED"
			}
			d.say("  %-9s %-15s %-10s score 0.96  exit %d  %s (based on revision %s)", p.slice, args[2], mark, c, firstLine(o, 0), base)
		}()
	}
	wg.Wait()
	if !(codes[0] == 0 && codes[1] == 4 || codes[0] == 4 && codes[1] == 0) {
		d.mu.Lock()
		d.failed++
		d.mu.Unlock()
		d.say("  %-9s UNEXPECTED: concurrent proposals ended with exits %v, want one 0 and one 4", p.slice, codes)
	}
}

func firstLine(s string, code int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if code != 0 {
		return fmt.Sprintf("exit %d: %s", code, line)
	}
	return line
}
