package cycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	appl "github.com/custodian-dev/custodian/app"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/cycle/progress"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// custodian cycle: the Parallel Dev Cycle of seed 003, one document per
// cycle at .workflow/.cycle/{cycleId}.json. Every change is one store
// commit on that key, validated by package cycle; after each commit the
// cycle's progress files are brought up to date (package cycle/progress).

// Exit codes of `custodian cycle signal`, chosen apart from the custodian's
// error codes (1-5) so that an agent can tell "stop working" from "the
// check itself failed".
const (
	SignalExitContinue = 0
	SignalExitPause    = 10
	SignalExitStop     = 11
	SignalExitUnknown  = 12
)

// MaxInputBytes bounds a file or stdin that a cycle command reads.
const MaxInputBytes = 16 << 20

type cycleCLI struct {
	app   *cmdutil.App
	actor string
	// sendF, when set, takes the requests the changing verbs make instead
	// of the application layer (tests of the command lines).
	sendF func(context.Context, *wire.CycleRequest) error
}

// NewCmd returns `custodian cycle` and its subcommands. Each changing
// subcommand parses its command line into the request it sends (a
// wire.CycleRequest: the cycle, the operation, the actor) and calls sendF
// with it; with sendF nil the request goes to the application layer and
// the result is printed.
func NewCmd(app *cmdutil.App, sendF func(context.Context, *wire.CycleRequest) error) *cobra.Command {
	c := &cycleCLI{app: app, sendF: sendF}
	cmd := &cobra.Command{
		Use:   "cycle",
		Short: "Parallel dev cycles: .workflow/.cycle/{cycleId}.json (seed 003)",
		Long: `Keep the state of a parallel development cycle: four agents (ra: requirements
analyst, ep: exploration planner, cd: code developer, vas: validation
archivist), iterations, versioned shared context, an append-only change log,
test results, feedback, decisions, blockers and control signals. Every change
is validated and committed atomically to .workflow/.cycle/{cycleId}.json; the
progress files under .workflow/.cycle/{cycleId}.progress/ follow each commit.

Agents call "custodian cycle signal ID" before each action: exit 0 means
continue, 10 pause, 11 stop, 12 the cycle is not running (created or
completed).`,
	}
	cmd.PersistentFlags().StringVar(&c.actor, "actor", "", "who is acting, for the journal (default $CUSTODIAN_ACTOR, else the agent named, else the OS user)")
	cmd.AddCommand(
		c.createCmd(), c.showCmd(), c.listCmd(), c.iterateCmd(), c.agentCmd(),
		c.changeCmd(), c.testResultsCmd(), c.requirementsCmd(), c.explorationCmd(),
		c.planCmd(), c.taskCmd(), c.feedbackCmd(), c.decideCmd(), c.blockCmd(),
		c.signalCmd(), c.pauseCmd(), c.resumeCmd(), c.stopCmd(), c.completeCmd(),
		c.rebuildCmd(), c.syncCmd(), c.putCmd(), c.appendCmd(),
	)
	return cmd
}

// journalLister is the file store's listing of a document's journal files
// (its sealed segments and the live journal).
type journalLister interface {
	JournalFiles(key string) ([]string, error)
}

// actorOr returns the journal's actor: --actor, $CUSTODIAN_ACTOR, then the
// given default (an agent's name), then the OS user.
func (c *cycleCLI) actorOr(def string) string {
	if c.actor == "" && os.Getenv("CUSTODIAN_ACTOR") == "" && def != "" {
		return def
	}
	return cmdutil.Actor(c.actor)
}

// cycleResult is what a mutating command prints with --json.
type cycleResult struct {
	CycleID  string      `json:"cycle_id"`
	Revision uint64      `json:"revision"`
	Event    string      `json:"event"`
	Summary  string      `json:"summary"`
	Cycle    cycle.State `json:"cycle"`
	Synced   []string    `json:"synced,omitempty"`
}

// load reads and checks a cycle. A cycle that is missing is NOT_FOUND; one
// that is not a valid CycleState is CORRUPT_STATE.
func (c *cycleCLI) load(ctx context.Context, id string) (cycle.State, uint64, error) {
	if err := cycle.CheckID(id); err != nil {
		return cycle.State{}, 0, err
	}
	s, err := c.app.Store()
	if err != nil {
		return cycle.State{}, 0, err
	}
	doc, err := s.Get(ctx, cycle.Key(id))
	if err != nil {
		if reason.CodeOf(err) == reason.NotFound {
			return cycle.State{}, 0, noCycle(id)
		}
		return cycle.State{}, 0, err
	}
	st, err := decodeValid(id, doc.Value)
	return st, doc.Revision, err
}

// The cycle's errors and checks are the application layer's.
var (
	noCycle     = appl.NoCycle
	decodeValid = appl.DecodeCycle
)

func messageOf(err error) string {
	if e, ok := reason.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// apply runs op on cycle id through the application layer (which syncs
// the progress files) and prints the result.
func (c *cycleCLI) apply(cmd *cobra.Command, id string, op cycle.Op, actor string) error {
	if err := cycle.CheckID(id); err != nil {
		return err
	}
	req, err := wire.CycleRequestOf(id, op, nil, actor)
	if err != nil {
		return err
	}
	return c.run(cmd, req, func(w io.Writer, r *wire.CycleResponse) error {
		_, err := fmt.Fprintf(w, "%s: %s\n", id, r.Summary)
		return err
	})
}

// run sends req to the application layer and renders its response.
func (c *cycleCLI) run(cmd *cobra.Command, req wire.CycleRequest, text func(io.Writer, *wire.CycleResponse) error) error {
	if c.sendF != nil {
		return c.sendF(c.app.Context(cmd), &req)
	}
	svc, err := c.app.Service()
	if err != nil {
		return err
	}
	r, err := svc.UpdateCycle(c.app.Context(cmd), req)
	if err != nil {
		return err
	}
	return c.app.Render(cycleResult{CycleID: r.CycleID, Revision: r.Revision, Event: r.Event, Summary: r.Summary, Cycle: r.Cycle, Synced: r.Synced}, func(w io.Writer) error {
		return text(w, r)
	})
}

func cycleEvents(ev cycle.Event) []store.Event {
	data, _ := json.Marshal(map[string]string{"summary": ev.Summary})
	return []store.Event{{Type: ev.Type, Data: data}}
}

// sync brings the progress files up to date with the latest committed
// state. The commit has already happened, so a failure here is a warning
// (the files are derived; custodian cycle sync writes them again).
func (c *cycleCLI) sync(ctx context.Context, id string) []string {
	return c.syncKnown(ctx, id, 0, cycle.State{})
}

// syncKnown is sync when the caller already holds the decoded state of
// revision rev (0: none), which saves decoding it again when it is still
// the latest.
func (c *cycleCLI) syncKnown(ctx context.Context, id string, rev uint64, st cycle.State) []string {
	wrote, err := c.syncFiles(ctx, id, rev, st)
	if err != nil {
		fmt.Fprintf(c.app.Err, "custodian: warning: cycle %s committed, but its progress files were not updated: %v (run custodian cycle sync %s)\n", id, err, id)
	}
	return wrote
}

func (c *cycleCLI) syncFiles(ctx context.Context, id string, knownRev uint64, known cycle.State) ([]string, error) {
	root, err := c.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return progress.Sync(root, id, func() (uint64, cycle.State, error) {
		s, err := c.app.Store()
		if err != nil {
			return 0, cycle.State{}, err
		}
		doc, err := s.Get(ctx, cycle.Key(id))
		if err != nil {
			return 0, cycle.State{}, err
		}
		if knownRev != 0 && doc.Revision == knownRev {
			return knownRev, known, nil
		}
		st, err := decodeValid(id, doc.Value)
		return doc.Revision, st, err
	})
}

func (c *cycleCLI) openRoot() (*os.Root, error) {
	dir, err := c.app.Root()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	return root, nil
}

func (c *cycleCLI) createCmd() *cobra.Command {
	var description, id string
	var maxIter int
	cmd := &cobra.Command{
		Use:   "create TASK",
		Short: "Create a cycle and print its id",
		Long: `Create a cycle in the seed's initial state. TASK's first 100 characters become
the title; --description is the full description (TASK when omitted). The id
is cycle-v1-<UTC time>-<6 random characters> unless --id gives one.`,
		Example: `  id=$(custodian cycle create "Implement OAuth authentication" \
        --description "Add OAuth2 login support with Google and GitHub providers")`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := json.Marshal(wire.CycleCreate{Task: args[0], Description: description, MaxIterations: &maxIter})
			if err != nil {
				return err
			}
			return c.run(cmd, wire.CycleRequest{ID: id, Op: "create", Args: a, Actor: c.actorOr("")}, func(w io.Writer, r *wire.CycleResponse) error {
				_, err := fmt.Fprintln(w, r.CycleID)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "the full task description (default: TASK)")
	cmd.Flags().IntVar(&maxIter, "max-iterations", cycle.DefaultMaxIterations, "the most iterations the cycle may run")
	cmd.Flags().StringVar(&id, "id", "", "the cycle id (default: a new cycle-v1-… id)")
	return cmd
}

func (c *cycleCLI) showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a cycle (--json: the whole document)",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := c.load(c.app.Context(cmd), args[0])
			if err != nil {
				return err
			}
			return c.app.Render(st, func(w io.Writer) error { return showText(w, st) })
		},
	}
}

func showText(w io.Writer, s cycle.State) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	p("Cycle\t%s", s.CycleID)
	p("Title\t%s", s.Title)
	status := s.Status
	switch s.Status {
	case cycle.StatusFailed:
		status += " (" + s.FailureReason + ")"
	case cycle.StatusCompleted:
		status += " at " + s.CompletedAt
	}
	p("Status\t%s", status)
	p("Iteration\t%d of %d, phase %s", s.CurrentIteration, s.MaxIterations, s.CurrentPhase)
	p("Created\t%s", s.CreatedAt)
	p("Updated\t%s", s.UpdatedAt)
	for _, n := range cycle.AgentNames {
		a := s.Agents.Get(n)
		line := fmt.Sprintf("Agent %s\t%s, %s completed", n, a.Status, cmdutil.Plural(a.IterationsCompleted, "iteration"))
		if a.Error != "" {
			line += ", error: " + a.Error
		} else if a.LastMessage != "" {
			line += ": " + a.LastMessage
		}
		p("%s", line)
	}
	if r := s.Requirements; r != nil {
		p("Requirements\t%s, %s, updated %s", r.Version, cmdutil.Plural(len(r.EdgeCases), "edge case"), r.LastUpdated)
	}
	if e := s.Exploration; e != nil {
		p("Exploration\t%s, %s, %s, updated %s", e.Version, cmdutil.Plural(len(e.IntegrationPoints), "integration point"), cmdutil.Plural(len(e.IdentifiedRisks), "risk"), e.LastUpdated)
	}
	if pl := s.Plan; pl != nil {
		done := 0
		for _, t := range pl.Tasks {
			if t.Status == "completed" {
				done++
			}
		}
		p("Plan\t%s, %d of %d tasks completed, updated %s", pl.Version, done, len(pl.Tasks), pl.LastUpdated)
	}
	if ch := s.Changes; ch != nil {
		p("Changes\t%s, %s", cmdutil.Plural(len(ch.Changes), "entry"), cmdutil.Plural(ch.TotalFiles, "file"))
	}
	if t := s.TestResults; t != nil {
		p("Tests\t%s, %g%% of %d passed, coverage %g%%, %d failed, run %s", t.Version, t.PassRate, t.TotalTests, t.Coverage, len(t.FailedTests), t.LastRun)
	}
	open, pending := 0, 0
	for _, b := range s.Coordination.Blockers {
		if b.Status == "open" {
			open++
		}
	}
	for _, d := range s.Coordination.PendingDecisions {
		if d.Status == "pending" {
			pending++
		}
	}
	p("Coordination\t%d feedback, %s pending, %s open", len(s.Coordination.FeedbackLog), cmdutil.Plural(pending, "decision"), cmdutil.Plural(open, "blocker"))
	for _, b := range s.Coordination.Blockers {
		if b.Status == "open" {
			p("Blocker %s\t%s (reported by %s)", b.ID, b.Description, b.ReportedBy)
		}
	}
	for _, d := range s.Coordination.PendingDecisions {
		if d.Status == "pending" {
			p("Decision %s\t%s: %s", d.ID, d.Description, strings.Join(d.Options, " | "))
		}
	}
	return tw.Flush()
}

// cycleSummary is one row of cycle list.
type cycleSummary struct {
	CycleID          string `json:"cycle_id"`
	Status           string `json:"status"`
	CurrentIteration int    `json:"current_iteration"`
	MaxIterations    int    `json:"max_iterations"`
	CurrentPhase     string `json:"current_phase"`
	Title            string `json:"title"`
	UpdatedAt        string `json:"updated_at"`
	Error            string `json:"error,omitempty"`
}

func (c *cycleCLI) listCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the cycles",
		Args:  cmdutil.ExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := c.app.Context(cmd)
			ids, err := c.cycleIDs(ctx)
			if err != nil {
				return err
			}
			rows := []cycleSummary{}
			for _, id := range ids {
				st, _, err := c.load(ctx, id)
				if err != nil {
					rows = append(rows, cycleSummary{CycleID: id, Status: "error", Error: messageOf(err)})
					continue
				}
				rows = append(rows, cycleSummary{CycleID: id, Status: st.Status, CurrentIteration: st.CurrentIteration,
					MaxIterations: st.MaxIterations, CurrentPhase: st.CurrentPhase, Title: st.Title, UpdatedAt: st.UpdatedAt})
			}
			return c.app.Render(rows, func(w io.Writer) error {
				if len(rows) == 0 {
					_, err := fmt.Fprintln(w, "No cycles.")
					return err
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tITERATION\tPHASE\tTITLE")
				for _, r := range rows {
					if r.Error != "" {
						fmt.Fprintf(tw, "%s\terror\t\t\t%s\n", r.CycleID, r.Error)
						continue
					}
					fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", r.CycleID, r.Status, r.CurrentIteration, r.MaxIterations, r.CurrentPhase, r.Title)
				}
				return tw.Flush()
			})
		},
	}
}

// cycleIDs lists the cycles: every <id>.json in the cycle directory, and
// every cycle the store has a journal for.
func (c *cycleCLI) cycleIDs(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	root, err := c.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), cycle.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list cycles: %w", err)
	}
	for _, e := range ents {
		if id, ok := cycle.IDFromKey(path.Join(cycle.Dir, e.Name())); ok && e.Type().IsRegular() {
			seen[id] = true
		}
	}
	s, err := c.app.Store()
	if err != nil {
		return nil, err
	}
	keys, err := s.Keys(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if id, ok := cycle.IDFromKey(k); ok {
			seen[id] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

func (c *cycleCLI) iterateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "iterate ID [EXTENSION]",
		Short: "Start the next iteration, optionally extending the task",
		Long: `Start the next iteration. The open one is closed first (its completion time,
issues found, and a marker in the change log). From the second iteration on,
the requirements and plan versions move to the next minor version (1.0.0 →
1.1.0). EXTENSION, the user's feedback for this iteration, is appended to
task_history and to the description ("--- ITERATION n ---") and logged as
requirement_update feedback from the user to ra.`,
		Example: `  custodian cycle iterate $id
  custodian cycle iterate $id "Also add multi-factor authentication"`,
		Args: cmdutil.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ext := ""
			if len(args) == 2 {
				ext = args[1]
			}
			return c.apply(cmd, args[0], cycle.Iterate{Extension: ext}, c.actorOr(""))
		},
	}
	return cmd
}

func (c *cycleCLI) agentCmd() *cobra.Command {
	var o cycle.SetAgent
	cmd := &cobra.Command{
		Use:   "agent ID AGENT STATUS",
		Short: "Record an agent's status (ra|ep|cd|vas; idle|running|waiting|completed|failed)",
		Long: `Record an agent's progress in the current iteration. Moves: idle → running or
waiting; running → waiting, completed or failed (or running again with a
--message); waiting → running or failed; completed or failed → running.
failed needs --error, which is also logged in phase_errors. When all four
agents have completed, the phase becomes aggregation.`,
		Example: `  custodian cycle agent $id ra running
  custodian cycle agent $id ra completed --files-modified 3 --output docs/requirements.md
  custodian cycle agent $id vas failed --error "3 tests fail"`,
		Args: cmdutil.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Agent, o.Status = args[1], args[2]
			return c.apply(cmd, args[0], o, c.actorOr(o.Agent))
		},
	}
	cmd.Flags().StringVarP(&o.Message, "message", "m", "", "the agent's latest message")
	cmd.Flags().StringVar(&o.Error, "error", "", "why the agent failed (with failed)")
	cmd.Flags().StringArrayVar(&o.OutputFiles, "output", nil, "a file the agent produced (repeatable)")
	cmd.Flags().IntVar(&o.FilesModified, "files-modified", 0, "how many files the agent modified in this iteration")
	return cmd
}

func (c *cycleCLI) changeCmd() *cobra.Command {
	var o cycle.AppendChange
	cmd := &cobra.Command{
		Use:   "change ID --file PATH --action create|modify|delete",
		Short: "Append to the change log (append-only)",
		Example: `  custodian cycle change $id --file src/config/oauth.ts --action create \
        --agent cd --description "OAuth config"`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.apply(cmd, args[0], o, c.actorOr(o.Agent))
		},
	}
	cmd.Flags().StringVar(&o.File, "file", "", "the file changed, relative to the project root")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &o.Action, "action", "", cycle.ChangeActions, "the kind of change")
	cmd.Flags().StringVar(&o.Agent, "agent", cycle.AgentCD, "the agent that made the change")
	cmd.Flags().StringVarP(&o.Description, "description", "m", "", "what changed")
	cmdutil.MarkRequired(cmd, "file")
	cmdutil.MarkRequired(cmd, "action")
	return cmd
}

func (c *cycleCLI) testResultsCmd() *cobra.Command {
	var o cycle.RecordTests
	var from string
	cmd := &cobra.Command{
		Use:   "test-results ID",
		Short: "Record a test run (vas); versioned like the requirements",
		Long: `Record a test run from flags, or from a JSON object {pass_rate, coverage,
failed_tests, total_tests} in a file or on stdin (--from -). Rates are
percentages (0-100).`,
		Example: `  custodian cycle test-results $id --pass-rate 85 --coverage 78 --total 20 \
        --failed "test: OAuth timeout retry"
  npm test --json | jq '{pass_rate, coverage, failed_tests, total_tests}' | custodian cycle test-results $id --from -`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from != "" {
				var in struct {
					PassRate    *float64 `json:"pass_rate"`
					Coverage    *float64 `json:"coverage"`
					FailedTests []string `json:"failed_tests"`
					TotalTests  *int     `json:"total_tests"`
				}
				if err := c.readJSON(from, &in); err != nil {
					return err
				}
				if in.PassRate == nil || in.Coverage == nil || in.TotalTests == nil {
					return reason.New(reason.InvalidInput, "test results need pass_rate, coverage and total_tests")
				}
				o = cycle.RecordTests{PassRate: *in.PassRate, Coverage: *in.Coverage, FailedTests: in.FailedTests, TotalTests: *in.TotalTests}
			} else if !cmd.Flags().Changed("pass-rate") || !cmd.Flags().Changed("total") {
				return reason.Usage("give --pass-rate and --total (and --coverage), or --from FILE")
			}
			return c.apply(cmd, args[0], o, c.actorOr(cycle.AgentVAS))
		},
	}
	cmd.Flags().Float64Var(&o.PassRate, "pass-rate", 0, "percentage of tests that passed (0-100)")
	cmd.Flags().Float64Var(&o.Coverage, "coverage", 0, "coverage percentage (0-100)")
	cmd.Flags().IntVar(&o.TotalTests, "total", 0, "number of tests run")
	cmd.Flags().StringArrayVar(&o.FailedTests, "failed", nil, "a failed test (repeatable)")
	cmd.Flags().StringVar(&from, "from", "", "read the results as JSON from `FILE` (- for stdin)")
	return cmd
}

// readJSON decodes one JSON object from a file or stdin ("-"), refusing
// unknown fields, trailing data and oversized input.
func (c *cycleCLI) readJSON(from string, v any) error {
	b, err := c.readInput(from)
	if err != nil {
		return err
	}
	if err := safetext.CheckJSON(inputName(from), b); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return reason.New(reason.InvalidInput, "malformed JSON in %s: %v", inputName(from), err)
	}
	if dec.More() {
		return reason.New(reason.InvalidInput, "malformed JSON in %s: more than one value", inputName(from))
	}
	return nil
}

func inputName(from string) string {
	if from == "-" {
		return "stdin"
	}
	return from
}

func (c *cycleCLI) readInput(from string) ([]byte, error) {
	var r io.Reader
	if from == "-" {
		r = c.app.In
	} else {
		f, err := os.Open(from)
		if err != nil {
			return nil, reason.New(reason.InvalidInput, "cannot read %s: %v", from, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "cannot read %s: %v", inputName(from), err)
	}
	if len(b) > MaxInputBytes {
		return nil, reason.New(reason.InvalidInput, "%s is over the limit of %d bytes", inputName(from), MaxInputBytes)
	}
	if err := safetext.CheckString(inputName(from), string(b)); err != nil {
		return nil, err
	}
	return b, nil
}

func (c *cycleCLI) requirementsCmd() *cobra.Command {
	var o cycle.SetRequirements
	var specFile string
	cmd := &cobra.Command{
		Use:   "requirements ID (--spec TEXT | --spec-file FILE)",
		Short: "Replace the requirements (ra); versioned (1.0.0, next patch, next minor per iteration)",
		Example: `  custodian cycle requirements $id --spec-file requirements.md \
        --edge-case "OAuth timeout handling" --edge-case "PKCE validation"`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if specFile != "" {
				if o.Specification != "" {
					return reason.Usage("give --spec or --spec-file, not both")
				}
				b, err := c.readInput(specFile)
				if err != nil {
					return err
				}
				o.Specification = string(b)
			}
			return c.apply(cmd, args[0], o, c.actorOr(cycle.AgentRA))
		},
	}
	cmd.Flags().StringVar(&o.Specification, "spec", "", "the specification")
	cmd.Flags().StringVar(&specFile, "spec-file", "", "read the specification from `FILE` (- for stdin)")
	cmd.Flags().StringArrayVar(&o.EdgeCases, "edge-case", nil, "an edge case (repeatable)")
	return cmd
}

func (c *cycleCLI) explorationCmd() *cobra.Command {
	var o cycle.SetExploration
	cmd := &cobra.Command{
		Use:   "exploration ID --summary TEXT",
		Short: "Replace the exploration findings (ep); versioned like the requirements",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.apply(cmd, args[0], o, c.actorOr(cycle.AgentEP))
		},
	}
	cmd.Flags().StringVar(&o.ArchitectureSummary, "summary", "", "the architecture summary")
	cmd.Flags().StringArrayVar(&o.IntegrationPoints, "integration-point", nil, "an integration point (repeatable)")
	cmd.Flags().StringArrayVar(&o.IdentifiedRisks, "risk", nil, "an identified risk (repeatable)")
	cmdutil.MarkRequired(cmd, "summary")
	return cmd
}

func (c *cycleCLI) planCmd() *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "plan ID --from FILE",
		Short: "Replace the plan (ep) from JSON; versioned like the requirements",
		Long: `Replace the plan with a JSON object {tasks, total_estimated_effort,
critical_path}; each task is {id, description, effort, depends_on, status,
assigned_to, files} as in the seed (status defaults to pending). Task ids must
be unique, dependencies must exist and form no cycle.`,
		Example: `  custodian cycle plan $id --from plan.json
  echo '{"tasks":[{"id":"TASK-001","description":"Setup","effort":"small"}]}' | custodian cycle plan $id --from -`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in struct {
				Tasks                []cycle.PlanTask `json:"tasks"`
				TotalEstimatedEffort string           `json:"total_estimated_effort"`
				CriticalPath         []string         `json:"critical_path"`
			}
			if err := c.readJSON(from, &in); err != nil {
				return err
			}
			return c.apply(cmd, args[0], cycle.SetPlan{Tasks: in.Tasks, TotalEstimatedEffort: in.TotalEstimatedEffort, CriticalPath: in.CriticalPath}, c.actorOr(cycle.AgentEP))
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "read the plan as JSON from `FILE` (- for stdin)")
	cmdutil.MarkRequired(cmd, "from")
	return cmd
}

func (c *cycleCLI) taskCmd() *cobra.Command {
	var assign string
	cmd := &cobra.Command{
		Use:   "task ID TASK-ID STATUS",
		Short: "Set a plan task's status (pending|in_progress|completed|blocked)",
		Long:  "Set a plan task's status; a task may start or complete only when the tasks it depends on are completed. The plan's patch version goes up.",
		Args:  cmdutil.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.apply(cmd, args[0], cycle.SetTask{ID: args[1], Status: args[2], AssignedTo: assign}, c.actorOr(assign))
		},
	}
	cmd.Flags().StringVar(&assign, "assign", "", "assign the task to an agent")
	return cmd
}

func (c *cycleCLI) feedbackCmd() *cobra.Command {
	var o cycle.AddFeedback
	cmd := &cobra.Command{
		Use:     "feedback ID CONTENT --from SOURCE --to TARGET --type TYPE",
		Short:   "Log feedback between agents or from the user (append-only)",
		Long:    "Log feedback. SOURCE and TARGET are ra, ep, cd, vas or user; TYPE is requirement_update, bug_report, issue_fix or clarification.",
		Example: `  custodian cycle feedback $id "OAuth retry test fails" --from vas --to cd --type bug_report`,
		Args:    cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Content = args[1]
			return c.apply(cmd, args[0], o, c.actorOr(o.Source))
		},
	}
	cmd.Flags().StringVar(&o.Source, "from", "user", "who gives the feedback")
	cmd.Flags().StringVar(&o.Target, "to", "", "who it is for")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &o.Type, "type", "", cycle.FeedbackTypes, "the kind of feedback")
	cmdutil.MarkRequired(cmd, "to")
	cmdutil.MarkRequired(cmd, "type")
	return cmd
}

func (c *cycleCLI) decideCmd() *cobra.Command {
	var description, decisionID, choose, by string
	var options []string
	var implemented bool
	cmd := &cobra.Command{
		Use:   "decide ID [DECISION-ID]",
		Short: "Propose a decision, make it (--choose), or mark it implemented",
		Example: `  custodian cycle decide $id --description "Token store" --option redis --option postgres
  custodian cycle decide $id DEC-001 --choose postgres --by ep
  custodian cycle decide $id DEC-001 --implemented`,
		Args: cmdutil.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var op cycle.Op
			switch {
			case len(args) == 1:
				if choose != "" || implemented {
					return reason.Usage("name the decision: custodian cycle decide ID DECISION-ID --choose OPTION")
				}
				op = cycle.ProposeDecision{ID: decisionID, Description: description, Options: options}
			case choose != "" && implemented:
				return reason.Usage("give --choose or --implemented, not both")
			case choose != "":
				op = cycle.MakeDecision{ID: args[1], Choice: choose, MadeBy: by}
			case implemented:
				op = cycle.ImplementDecision{ID: args[1]}
			default:
				return reason.Usage("with a DECISION-ID, give --choose OPTION --by WHO, or --implemented")
			}
			return c.apply(cmd, args[0], op, c.actorOr(by))
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what is to be decided (to propose)")
	cmd.Flags().StringArrayVar(&options, "option", nil, "an option (repeatable, to propose)")
	cmd.Flags().StringVar(&decisionID, "decision-id", "", "the new decision's id (default DEC-nnn)")
	cmd.Flags().StringVar(&choose, "choose", "", "the option chosen")
	cmd.Flags().StringVar(&by, "by", "", "who made the decision (with --choose)")
	cmd.Flags().BoolVar(&implemented, "implemented", false, "mark a made decision implemented")
	return cmd
}

func (c *cycleCLI) blockCmd() *cobra.Command {
	var description, blockerID, by, resolve, workaround string
	cmd := &cobra.Command{
		Use:   "block ID [BLOCKER-ID]",
		Short: "Report a blocker, resolve it, or record a workaround",
		Example: `  custodian cycle block $id --description "No sandbox credentials" --by cd
  custodian cycle block $id BLK-001 --workaround "mock provider"
  custodian cycle block $id BLK-001 --resolve "credentials arrived"`,
		Args: cmdutil.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var op cycle.Op
			switch {
			case len(args) == 1:
				if resolve != "" || workaround != "" {
					return reason.Usage("name the blocker: custodian cycle block ID BLOCKER-ID --resolve TEXT")
				}
				op = cycle.ReportBlocker{ID: blockerID, Description: description, ReportedBy: by}
			case resolve != "" && workaround != "":
				return reason.Usage("give --resolve or --workaround, not both")
			case resolve != "":
				op = cycle.ResolveBlocker{ID: args[1], Resolution: resolve}
			case workaround != "":
				op = cycle.ResolveBlocker{ID: args[1], Resolution: workaround, Workaround: true}
			default:
				return reason.Usage("with a BLOCKER-ID, give --resolve TEXT or --workaround TEXT")
			}
			return c.apply(cmd, args[0], op, c.actorOr(by))
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what blocks (to report)")
	cmd.Flags().StringVar(&by, "by", "", "who reports it")
	cmd.Flags().StringVar(&blockerID, "blocker-id", "", "the new blocker's id (default BLK-nnn)")
	cmd.Flags().StringVar(&resolve, "resolve", "", "how the blocker was resolved")
	cmd.Flags().StringVar(&workaround, "workaround", "", "the workaround in place")
	return cmd
}

func (c *cycleCLI) signalCmd() *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "signal ID",
		Short: "What an agent must do now: exit 0 continue, 10 pause, 11 stop, 12 not running",
		Long: `Check the cycle's control signal, as the seed's checkControlSignals: a running
cycle says continue (exit 0); paused says pause (exit 10); stopped (failed)
says stop (exit 11); created or completed says unknown (exit 12): do not act.
Agents call it before each action. The action is printed, or with --json
{"cycle_id", "status", "continue", "action"}. Errors (no such cycle, …) keep
the custodian's usual exit codes (1-5).

With --wait, a paused cycle is watched until it is resumed or stopped (or
--timeout passes), and the signal printed is the one that ended the wait.`,
		Example: `  custodian cycle signal $id || exit 0        # stop working unless told to continue
  custodian cycle signal $id --wait --timeout 30m`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := c.app.Context(cmd)
			st, rev, err := c.load(ctx, args[0])
			if err != nil {
				return err
			}
			sig := cycle.CheckSignal(st)
			if wait && sig.Action == cycle.ActionPause {
				if sig, err = c.waitWhilePaused(ctx, args[0], rev, timeout); err != nil {
					return err
				}
			}
			if err := c.app.Render(sig, func(w io.Writer) error {
				_, err := fmt.Fprintln(w, sig.Action)
				return err
			}); err != nil {
				return err
			}
			if code := signalExit(sig.Action); code != SignalExitContinue {
				return &cmdutil.ExitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "while the cycle is paused, wait for it to be resumed or stopped")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "with --wait, give up after this long (0: wait forever) and report pause")
	return cmd
}

// waitWhilePaused watches the cycle's commits from revision rev until its
// signal is no longer pause, or the timeout passes (then it is still pause).
func (c *cycleCLI) waitWhilePaused(ctx context.Context, id string, rev uint64, timeout time.Duration) (cycle.Signal, error) {
	s, err := c.app.Store()
	if err != nil {
		return cycle.Signal{}, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	paused := cycle.Signal{CycleID: id, Status: cycle.StatusPaused, Action: cycle.ActionPause}
	for _, err := range s.Watch(ctx, cycle.Key(id), rev) {
		if err != nil {
			if ctx.Err() != nil {
				return paused, nil
			}
			return cycle.Signal{}, err
		}
		doc, err := s.Get(ctx, cycle.Key(id))
		if err != nil {
			if ctx.Err() != nil {
				return paused, nil
			}
			return cycle.Signal{}, err
		}
		st, err := decodeValid(id, doc.Value)
		if err != nil {
			return cycle.Signal{}, err
		}
		if sig := cycle.CheckSignal(st); sig.Action != cycle.ActionPause {
			return sig, nil
		}
	}
	// The watch ends only when ctx is done: the timeout passed.
	return paused, nil
}

func signalExit(action string) int {
	switch action {
	case cycle.ActionContinue:
		return SignalExitContinue
	case cycle.ActionPause:
		return SignalExitPause
	case cycle.ActionStop:
		return SignalExitStop
	}
	return SignalExitUnknown
}

func (c *cycleCLI) pauseCmd() *cobra.Command {
	return c.controlCmd("pause ID", "Pause a running cycle (agents get signal pause)", "why, for the journal",
		func(why string) cycle.Op { return cycle.Pause{Reason: why} })
}

func (c *cycleCLI) resumeCmd() *cobra.Command {
	return c.controlCmd("resume ID", "Resume a paused cycle (agents get signal continue)", "why, for the journal",
		func(why string) cycle.Op { return cycle.Resume{Reason: why} })
}

func (c *cycleCLI) stopCmd() *cobra.Command {
	cmd := c.controlCmd("stop ID --reason TEXT", "Stop a cycle for good: status failed (agents get signal stop)", "why the cycle stops (recorded as failure_reason)",
		func(why string) cycle.Op { return cycle.Stop{Reason: why} })
	cmdutil.MarkRequired(cmd, "reason")
	return cmd
}

// controlCmd is a control-signal command (pause, resume, stop): a cycle id
// and a --reason for the journal.
func (c *cycleCLI) controlCmd(use, short, reasonHelp string, op func(why string) cycle.Op) *cobra.Command {
	var why string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.apply(cmd, args[0], op(why), c.actorOr(""))
		},
	}
	cmd.Flags().StringVar(&why, "reason", "", reasonHelp)
	return cmd
}

func (c *cycleCLI) completeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "complete ID",
		Short: "Complete a running cycle (closing its iteration)",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.apply(cmd, args[0], cycle.Complete{}, c.actorOr(""))
		},
	}
}

func (c *cycleCLI) syncCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sync ID",
		Short: "Write the cycle's progress files again from its state",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := c.app.Context(cmd)
			if _, _, err := c.load(ctx, args[0]); err != nil {
				return err
			}
			wrote, err := c.syncFiles(ctx, args[0], 0, cycle.State{})
			if err != nil {
				return err
			}
			if wrote == nil {
				wrote = []string{}
			}
			return c.app.Render(map[string]any{"cycle_id": args[0], "synced": wrote}, func(w io.Writer) error {
				if len(wrote) == 0 {
					_, err := fmt.Fprintf(w, "%s: progress files up to date\n", args[0])
					return err
				}
				for _, f := range wrote {
					if _, err := fmt.Fprintf(w, "wrote %s\n", f); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

func (c *cycleCLI) rebuildCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild ID",
		Short: "Rebuild a lost or damaged cycle from its progress files",
		Long: `Rebuild a cycle whose document is missing, unreadable or invalid from
.workflow/.cycle/ID.progress/ (the seed's rebuildState): requirements, plan,
exploration, changes and test results as the files hold them; metadata and
iterations from the timeline. Agent states, phase errors, feedback and
decisions are not in those files: a cycle that was still going comes back
paused with an open blocker BLK-REBUILD, so agents wait until a human has
reviewed it and resumed it. A damaged document that the store cannot recover
is moved aside to ID.json.corrupt-<time> first. A readable, valid cycle is
never replaced.`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.rebuild(cmd, args[0])
		},
	}
}

func (c *cycleCLI) rebuild(cmd *cobra.Command, id string) error {
	if err := cycle.CheckID(id); err != nil {
		return err
	}
	ctx := c.app.Context(cmd)
	s, err := c.app.Store()
	if err != nil {
		return err
	}
	root, err := c.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	key := cycle.Key(id)
	if _, err := s.Get(ctx, key); reason.CodeOf(err) == reason.CorruptState {
		// The store could not recover the document. With a journal, the
		// journal itself is damaged: that is for verify and a human. Without
		// one, keep the damaged file aside (never overwrite it) and rebuild.
		journal := path.Join(cycle.Dir, id+".journal.ndjson")
		if _, serr := root.Stat(journal); serr == nil {
			return fmt.Errorf("%w; its journal %s exists, so rebuild leaves it alone (see custodian verify %s)", err, journal, key)
		}
		if jl, ok := s.(journalLister); ok {
			files, _ := jl.JournalFiles(key)
			// Its journal proper, not the anchor or marks left beside a
			// lost one.
			files = slices.DeleteFunc(files, func(f string) bool { return !strings.HasSuffix(f, ".ndjson") })
			if len(files) > 0 {
				return fmt.Errorf("%w; its journal (%s) exists, so rebuild leaves it alone (see custodian verify %s)", err, strings.Join(files, ", "), key)
			}
		}
		aside := key + ".corrupt-" + c.app.Now().UTC().Format("20060102T150405Z")
		if rerr := root.Rename(key, aside); rerr != nil {
			return fmt.Errorf("%w (and could not move it aside: %v)", err, rerr)
		}
		fmt.Fprintf(c.app.Err, "custodian: moved the damaged %s aside to %s\n", key, aside)
	} else if err == nil {
		if _, _, lerr := c.load(ctx, id); lerr == nil {
			return reason.New(reason.InvalidTransition, "cycle %s exists and is valid; rebuild only restores a lost or damaged cycle", id)
		}
	} else if reason.CodeOf(err) != reason.NotFound {
		return err
	}
	files, err := progress.Read(root, id)
	if err != nil {
		return err
	}
	rec, err := progress.Parse(files)
	if err != nil {
		return err
	}
	now := c.app.Now()
	st, err := cycle.Restore(id, rec, now)
	if err != nil {
		return err
	}
	raw, err := cycle.Encode(st)
	if err != nil {
		return err
	}
	found := make([]string, 0, len(files))
	for _, f := range progress.Files {
		if _, ok := files[f]; ok {
			found = append(found, f)
		}
	}
	summary := fmt.Sprintf("rebuilt from %s (%s)", cycle.ProgressDir(id), strings.Join(found, ", "))
	res, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		if cur.Exists() {
			if _, err := decodeValid(id, cur.Value); err == nil {
				return store.Change{}, reason.New(reason.Conflict, "cycle %s was written while it was being rebuilt; nothing rebuilt", id)
			}
		}
		return store.Change{Value: raw, Actor: c.actorOr(""), Reason: summary,
			Events: cycleEvents(cycle.Event{Type: "cycle.rebuild", Summary: summary})}, nil
	}, store.Create())
	if err != nil {
		return err
	}
	synced := c.sync(ctx, id)
	return c.app.Render(cycleResult{CycleID: id, Revision: res.Revision, Event: "cycle.rebuild", Summary: summary, Cycle: st, Synced: synced}, func(w io.Writer) error {
		msg := fmt.Sprintf("%s: %s; status %s", id, summary, st.Status)
		if slices.ContainsFunc(st.Coordination.Blockers, func(b cycle.Blocker) bool { return b.ID == cycle.RebuildBlockerID }) {
			msg += "; review it, resolve blocker " + cycle.RebuildBlockerID + " and resume"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	})
}
