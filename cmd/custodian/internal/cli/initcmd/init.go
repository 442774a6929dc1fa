package initcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/admincred"
)

// Options is what `custodian init` was asked to do.
type Options struct {
	App    *cmdutil.App
	Sprint string   // project_context.current_sprint
	Goals  []string // product goals
	Force  bool     // rewrite .asdd/config.yaml with the defaults
}

// NewCmd returns `custodian init`; it parses the command line into Options
// and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
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
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Sprint, "sprint", "", "the current sprint (project_context.current_sprint)")
	cmd.Flags().StringArrayVar(&opts.Goals, "goal", nil, "a product goal (repeatable)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "rewrite .asdd/config.yaml with the defaults")
	return cmd
}

// run writes the config (unless it exists, or with Force), the state's
// .gitignore files, and proposes Init unless the manifest exists and no
// project context was given.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	root, err := app.Root()
	if err != nil {
		return err
	}
	// A manifest at revision 0 was written by another tool (the seed's
	// agents, by hand): Init's commit adopts it. One that does not match
	// its schema is refused before anything is written.
	var m *asdd.Manifest
	adopt := false
	if _, err := os.Stat(root); err == nil {
		if m, err = cmdutil.LoadManifest(ctx, app); err != nil && !errors.Is(err, appl.ErrNoManifest) {
			return err
		}
		adopt = m != nil && m.Revision == 0
	}
	cfgPath := filepath.Join(root, filepath.FromSlash(asdd.ConfigPath))
	wroteConfig := false
	if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) || opts.Force {
		if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(cfgPath, asdd.DefaultConfigYAML, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", asdd.ConfigPath, err)
		}
		wroteConfig = true
	} else if _, err := cmdutil.ASDDConfig(app); err != nil {
		return err
	}
	if err := writeStateGitignore(root); err != nil {
		return err
	}
	if m != nil && !adopt && opts.Sprint == "" && len(opts.Goals) == 0 {
		r := &cmdutil.CommitResult{Revision: m.Revision, Summary: "already initialized", Events: []asdd.Event{}}
		return cmdutil.Finish(app, r, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "ASDD state already initialized at revision %d (%s)\n", m.Revision, asdd.Key)
			return err
		})
	}
	_, r, err := cmdutil.ApplyOp(ctx, app, asdd.Init{Sprint: opts.Sprint, Goals: opts.Goals})
	if err != nil {
		return err
	}
	// The human's first init makes the admin credential the CLI attaches
	// to human decisions (a daemon's serve makes it too).
	if _, _, err := admincred.Ensure(root); err != nil {
		fmt.Fprintf(app.Err, "custodian: warning: %v\n", err)
	}
	return cmdutil.Finish(app, r, func(w io.Writer) error {
		if wroteConfig {
			fmt.Fprintf(w, "wrote %s\n", asdd.ConfigPath)
		}
		if adopt {
			_, err := fmt.Fprintf(w, "adopted %s (written by another tool) at revision %d; its unknown members are kept\n", asdd.Key, r.Revision)
			return err
		}
		_, err := fmt.Fprintf(w, "initialized %s at revision %d\n", asdd.Key, r.Revision)
		return err
	})
}

// stateGitignore keeps what is local to one machine out of git: the state
// (manifest and journal) is shared, locks and caches are not.
const stateGitignore = `# Written by custodian init: files local to this machine.
.lock
.*.lock
.checkpoint
.valid
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
