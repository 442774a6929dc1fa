package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// The ASDD commands (seeds 000 and 004): the manifest at
// .asdd/state/manifest.json, changed only through asdd.Apply inside a store
// Update; file side effects applied after the commit.

// asddConfig reads .asdd/config.yaml; a missing file means the defaults.
func asddConfig(app *App) (*asdd.Config, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	b, err := readProjectFile(filepath.Join(root, filepath.FromSlash(asdd.ConfigPath)))
	if errors.Is(err, fs.ErrNotExist) {
		return asdd.DefaultConfig(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", asdd.ConfigPath, err)
	}
	return asdd.ParseConfig(b)
}

var errNoASDDManifest = reason.New(reason.NotFound, "no ASDD manifest at %s: run `custodian init` first", asdd.Key)

// noManifestHint turns the store's "no document" for the ASDD manifest into
// errNoASDDManifest, which says to run custodian init.
func noManifestHint(err error) error {
	if e, ok := reason.As(err); ok && e.Code == reason.NotFound && strings.HasPrefix(e.Message, "no document "+asdd.Key) {
		return errNoASDDManifest
	}
	return err
}

// loadManifest returns the committed manifest.
func loadManifest(app *App, cmd *cobra.Command) (*asdd.Manifest, error) {
	st, err := app.Store()
	if err != nil {
		return nil, err
	}
	doc, err := st.Get(app.Context(cmd), asdd.Key)
	if reason.CodeOf(err) == reason.NotFound {
		return nil, errNoASDDManifest
	}
	if err != nil {
		return nil, err
	}
	if !doc.Exists() {
		return nil, errNoASDDManifest
	}
	m, err := asdd.Decode(doc.Value)
	if err != nil {
		return nil, corrupt(err)
	}
	m.Revision = doc.Revision
	return m, nil
}

// corrupt reports a committed manifest that does not decode.
func corrupt(err error) error {
	return reason.New(reason.CorruptState, "%s does not match its schema (run `custodian check` or `custodian rebuild`): %w", asdd.Key, err)
}

// commitResult is what a mutating command reports: the operation's
// response, as the API gives it (committed and outcome say whether state
// changed; a rejection is an error and changes nothing).
type commitResult = wire.OpResponse

// applyOp runs op through the application layer (the daemon's when one
// runs): the rules, the commit and the file effects. A committed halt
// comes back with its Verdict set. The outcome carries no manifest.
func applyOp(app *App, cmd *cobra.Command, op asdd.Op, _ bool) (*asdd.Outcome, *commitResult, error) {
	svc, err := app.Service()
	if err != nil {
		return nil, nil, err
	}
	resp, err := svc.ASDD(app.Context(cmd), op)
	if err != nil {
		return nil, nil, rejected(noManifestHint(err))
	}
	if _, remote := svc.(*appRemote); remote {
		for _, w := range resp.Warnings {
			fmt.Fprintf(app.Err, "custodian: warning: committed revision %d, but: %s\n", resp.Revision, w)
		}
	}
	return &asdd.Outcome{Summary: resp.Summary, Events: resp.Events, Verdict: resp.Verdict}, resultOf(resp), nil
}

// resultOf is the command's report of an operation's response.
func resultOf(resp *wire.OpResponse) *commitResult {
	r := *resp
	if r.Events == nil {
		r.Events = []asdd.Event{}
	}
	return &r
}

// rejectedError is an operation the rules (or the input checks) refused:
// nothing was committed. Its text and --json say so.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string { return e.err.Error() }
func (e *rejectedError) Unwrap() error { return e.err }

// rejected marks a refusal with a reason code as a rejection.
func rejected(err error) error {
	if _, ok := reason.As(err); !ok {
		return err
	}
	if errors.As(err, new(*rejectedError)) {
		return err
	}
	return &rejectedError{err}
}

// finish renders a commit result and turns a committed halt into the
// verdict's exit code.
func finish(app *App, r *commitResult, text func(w io.Writer) error) error {
	if err := app.Render(r, func(w io.Writer) error {
		if text != nil {
			return text(w)
		}
		_, err := fmt.Fprintf(w, "revision %d: %s\n", r.Revision, r.Summary)
		return err
	}); err != nil {
		return err
	}
	if r.Verdict != nil {
		if !app.JSON {
			fmt.Fprintf(app.Err, "custodian: halted (committed at revision %d): %v\n", r.Revision, r.Verdict)
		}
		return &ExitError{Code: r.Verdict.Code.ExitCode()}
	}
	return nil
}

func newASDDInitCmd(app *App) *cobra.Command {
	var sprint string
	var goals []string
	var force bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set up ASDD state: .asdd/config.yaml with the seed's defaults and an empty manifest",
		Long: `Write .asdd/config.yaml (the thirteen agents with their minimum confidence and
action if below, the CCS agents and floor, gating, uncertainty threshold,
refinement-loop limit, heartbeat timeout, steering rules) unless it exists,
and create .asdd/state/manifest.json. Running it again changes nothing but
the project context given with --sprint and --goal.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := app.Root()
			if err != nil {
				return err
			}
			cfgPath := filepath.Join(root, filepath.FromSlash(asdd.ConfigPath))
			wroteConfig := false
			if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) || force {
				if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(cfgPath, asdd.DefaultConfigYAML, 0o644); err != nil {
					return fmt.Errorf("write %s: %w", asdd.ConfigPath, err)
				}
				wroteConfig = true
			} else if _, err := asddConfig(app); err != nil {
				return err
			}
			if err := writeStateGitignore(root); err != nil {
				return err
			}
			if m, err := loadManifest(app, cmd); err == nil && sprint == "" && len(goals) == 0 {
				r := &commitResult{Revision: m.Revision, Summary: "already initialized", Events: []asdd.Event{}}
				return finish(app, r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "ASDD state already initialized at revision %d (%s)\n", m.Revision, asdd.Key)
					return err
				})
			} else if err != nil && err != errNoASDDManifest {
				return err
			}
			_, r, err := applyOp(app, cmd, asdd.Init{Sprint: sprint, Goals: goals}, true)
			if err != nil {
				return err
			}
			return finish(app, r, func(w io.Writer) error {
				if wroteConfig {
					fmt.Fprintf(w, "wrote %s\n", asdd.ConfigPath)
				}
				_, err := fmt.Fprintf(w, "initialized %s at revision %d\n", asdd.Key, r.Revision)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&sprint, "sprint", "", "the current sprint (project_context.current_sprint)")
	cmd.Flags().StringArrayVar(&goals, "goal", nil, "a product goal (repeatable)")
	cmd.Flags().BoolVar(&force, "force", false, "rewrite .asdd/config.yaml with the defaults")
	return cmd
}

// stateGitignore keeps what is local to one machine out of git: the state
// (manifest and journal) is shared, locks and caches are not.
const stateGitignore = `# Written by custodian init: files local to this machine.
.lock
.*.lock
statcache
checkcache
custodian.sock
custodian.pid
*.tmp
`

// runsGitignore keeps custodian run's files out of git: run logs, context
// packets, the runner's lock and its list of live agents.
const runsGitignore = `# Written by custodian init: custodian run's logs, context packets and lock
# are local to this machine.
*
`

// writeStateGitignore writes .asdd/state/.gitignore and .asdd/runs/.gitignore,
// each unless it exists.
func writeStateGitignore(root string) error {
	for _, f := range []struct{ dir, text string }{{"state", stateGitignore}, {"runs", runsGitignore}} {
		p := filepath.Join(root, ".asdd", f.dir, ".gitignore")
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	return nil
}

func newSchemaCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:       "schema [asdd]",
		Short:     "Print the JSON Schema of a state document (asdd: .asdd/state/manifest.json)",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"asdd"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "asdd" {
				return reason.Usage("unknown schema %q (known: asdd)", args[0])
			}
			_, err := app.Out.Write(asdd.Schema)
			return err
		},
	}
}

// parseArtifactFlags turns NAME=PATH flags into hashed artifacts.
func parseArtifactFlags(p *effects.Project, flags []string, marker string) ([]asdd.Artifact, error) {
	var out []asdd.Artifact
	for _, f := range flags {
		name, path, ok := strings.Cut(f, "=")
		if !ok || name == "" || path == "" {
			return nil, reason.Usage("--artifact wants NAME=PATH, got %q", f)
		}
		a, err := p.Artifact(name, filepath.ToSlash(path), marker)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// openProject opens the project root for reading artifacts.
func openProject(app *App) (*effects.Project, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	return effects.Open(root)
}
