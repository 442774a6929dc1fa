package cycle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
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
const MaxInputBytes = cmdutil.MaxInput

type cycleCLI struct {
	app   *cmdutil.App
	actor string
	runs  Runs
}

// Runs are the functions cycle's subcommands call once their command
// lines are parsed; a nil one runs the command. The changing verbs (create,
// iterate, …, put, rebuild) build the request they send to the
// application layer and call Send with it; the others take their options.
type Runs struct {
	Send   func(context.Context, *wire.CycleRequest) error
	Show   func(context.Context, *ShowOptions) error
	List   func(context.Context, *ListOptions) error
	Signal func(context.Context, *SignalOptions) error
	Sync   func(context.Context, *SyncOptions) error
	Append func(context.Context, *AppendOptions) error
}

// NewCmd returns `custodian cycle` and its subcommands. Each subcommand
// parses its command line into its request or options and calls its
// function in runs (nil, or a nil function: the command's own, which sends
// the request to the application layer, or reads, and prints the result).
func NewCmd(app *cmdutil.App, runs *Runs) *cobra.Command {
	c := &cycleCLI{app: app}
	if runs != nil {
		c.runs = *runs
	}
	if c.runs.Show == nil {
		c.runs.Show = runShow
	}
	if c.runs.List == nil {
		c.runs.List = runList
	}
	if c.runs.Signal == nil {
		c.runs.Signal = runSignal
	}
	if c.runs.Sync == nil {
		c.runs.Sync = runSync
	}
	if c.runs.Append == nil {
		c.runs.Append = runAppend
	}
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
		c.createCmd(), newShowCmd(app, c.runs.Show), newListCmd(app, c.runs.List), c.iterateCmd(), c.agentCmd(),
		c.changeCmd(), c.testResultsCmd(), c.requirementsCmd(), c.explorationCmd(),
		c.planCmd(), c.taskCmd(), c.feedbackCmd(), c.decideCmd(), c.blockCmd(),
		newSignalCmd(app, c.runs.Signal), c.pauseCmd(), c.resumeCmd(), c.stopCmd(), c.completeCmd(),
		c.rebuildCmd(), newSyncCmd(app, c.runs.Sync), c.putCmd(), newAppendCmd(app, c.runs.Append),
	)
	return cmd
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

// load reads and checks a cycle through the application layer. A cycle
// that is missing is NOT_FOUND; one that is not a valid CycleState is
// CORRUPT_STATE.
func load(ctx context.Context, app *cmdutil.App, id string) (cycle.State, uint64, error) {
	if err := cycle.CheckID(id); err != nil {
		return cycle.State{}, 0, err
	}
	svc, err := app.Service()
	if err != nil {
		return cycle.State{}, 0, err
	}
	return svc.Cycle(ctx, id)
}

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
	if c.runs.Send != nil {
		return c.runs.Send(c.app.Context(cmd), &req)
	}
	svc, err := c.app.Service()
	if err != nil {
		return err
	}
	r, err := svc.UpdateCycle(c.app.Context(cmd), req)
	if err != nil {
		return err
	}
	if r.MovedAside != "" {
		fmt.Fprintf(c.app.Err, "custodian: moved the damaged %s aside to %s\n", cycle.Key(r.CycleID), r.MovedAside)
	}
	return c.app.Render(cycleResult{CycleID: r.CycleID, Revision: r.Revision, Event: r.Event, Summary: r.Summary, Cycle: r.Cycle, Synced: r.Synced}, func(w io.Writer) error {
		return text(w, r)
	})
}

func openRoot(app *cmdutil.App) (*os.Root, error) {
	dir, err := app.Root()
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
	return cmdutil.ReadInput(r, inputName(from))
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

// rebuild asks the application layer (the daemon's while one runs) to
// rebuild the cycle from its progress files, which it reads itself.
func (c *cycleCLI) rebuild(cmd *cobra.Command, id string) error {
	if err := cycle.CheckID(id); err != nil {
		return err
	}
	return c.run(cmd, wire.CycleRequest{ID: id, Op: "rebuild", Actor: c.actorOr("")}, func(w io.Writer, r *wire.CycleResponse) error {
		msg := fmt.Sprintf("%s: %s; status %s", id, r.Summary, r.Cycle.Status)
		if slices.ContainsFunc(r.Cycle.Coordination.Blockers, func(b cycle.Blocker) bool { return b.ID == cycle.RebuildBlockerID }) {
			msg += "; review it, resolve blocker " + cycle.RebuildBlockerID + " and resume"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	})
}
