package integrity

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// RepairOptions is what `custodian repair` was asked to do.
type RepairOptions struct {
	App    *cmdutil.App
	Key    string
	Keep   string // journal or snapshot
	Reason string
	Actor  string // --actor ("": $CUSTODIAN_ACTOR or the OS user)
}

// NewRepairCmd returns `custodian repair`; it parses the command line
// into RepairOptions and calls runF with them (runRepair when runF is nil).
func NewRepairCmd(app *cmdutil.App, runF func(context.Context, *RepairOptions) error) *cobra.Command {
	opts := &RepairOptions{App: app}
	cmd := &cobra.Command{
		Use:   "repair KEY --keep journal|snapshot --reason TEXT",
		Short: "Settle a document whose journal lost records, is missing or was rewritten (what recovery refuses to guess)",
		Long: `Every command refuses, with CORRUPT_STATE (exit 5) and changing nothing, a
document whose journal and snapshot disagree in a way only a person can
settle: the journal ends before the revision its anchor (.head) says was
committed (records lost), the journal is missing beside a snapshot that was
journaled, a record is not the one the anchor names (history rewritten), or,
with a journal key, the anchor or a record is not authenticated by it.

  --keep journal   the journal, as it is, is the document's history: the
                   anchor is set to its head (with the key, authenticated),
                   and a snapshot that is no revision of it is moved aside
  --keep snapshot  the same, then the snapshot's value is committed as a new
                   revision by --actor (it must pass the document's
                   validator); a snapshot whose journal is gone starts a new
                   journal at revision 1

Every file replaced is moved aside (.repaired-<time>, .unjournaled-<time>),
never deleted. Run it with the daemon stopped.`,
		Example: `  custodian repair .asdd/state/manifest.json --keep snapshot --reason "journal restored from backup lacked the last commit"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(opts.Reason) == "" {
				return reason.Usage("repair needs --reason")
			}
			opts.Key = args[0]
			return cmdutil.Run(app, cmd, opts, runF, runRepair)
		},
	}
	cmd.Flags().StringVar(&opts.Keep, "keep", "", "what to keep: journal or snapshot (required)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why (required; recorded in the journal)")
	cmd.Flags().StringVar(&opts.Actor, "actor", "", "who is repairing (default $CUSTODIAN_ACTOR or the OS user)")
	_ = cmd.MarkFlagRequired("keep")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

// runRepair settles the document with the daemon stopped, keeping aside every file it replaces.
func runRepair(ctx context.Context, opts *RepairOptions) error {
	app := opts.App
	if err := app.RequireHuman("repair"); err != nil {
		return err
	}
	svc, err := app.LocalService() // the daemon stopped: repair moves its files
	if err != nil {
		return err
	}
	res, err := svc.Repair(ctx, cmdutil.ResolveKey(opts.Key), opts.Keep, cmdutil.Actor(opts.Actor), opts.Reason)
	if err != nil {
		return err
	}
	return app.Render(res, func(w io.Writer) error {
		for _, a := range res.Aside {
			fmt.Fprintf(w, "kept aside: %s\n", a)
		}
		if res.Committed {
			_, err := fmt.Fprintf(w, "%s repaired: the snapshot's value committed as revision %d\n", res.Key, res.Revision)
			return err
		}
		_, err := fmt.Fprintf(w, "%s repaired: the journal is its history, at revision %d\n", res.Key, res.Revision)
		return err
	})
}
