package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/reason"
)

func init() { Register("mirror", newMirrorCmd) }

type mirrorReport struct {
	Store     string           `json:"store"`
	Documents []mirror.Outcome `json:"documents"`
}

func newMirrorCmd(app *App) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use:   "mirror [--once]",
		Short: "Keep the local read-only mirrors of the etcd documents current (for plugins that read the files)",
		Long: `On etcd (--store etcd://…, $CUSTODIAN_STORE, or store: in .asdd/config.yaml)
the documents live in the cluster; plugins and hooks that read
.asdd/state/manifest.json, .impl/manifest.json, .agents/tmp/state.json or a
cycle file read a mirror of it at its usual path. custodian serve keeps its
machine's mirrors current from the etcd watch, and every other command
refreshes the mirrors of the documents it reads or commits; this command
does it explicitly.

  --once   write every document's latest version and exit (a cron job, a hook)
  (none)   follow the etcd watch until SIGINT or SIGTERM, like the daemon

Each mirror is written atomically and its revision is recorded in a state
file beside it (.asdd/state/.mirror for the manifest, .<name>.mirror for the
others). A mirror edited or deleted by hand is restored from the store; the
edited file is kept as <file>.direct-edit-<time> and an escalation notice is
written under .asdd/escalations/.`,
		Example: `  custodian --store etcd://10.0.0.5:2379/team/proj mirror --once
  custodian mirror &        # follow the cluster without a daemon`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := ConfiguredStoreURL(app)
			if err != nil {
				return err
			}
			if !isEtcdURL(u) {
				return reason.Usage("mirrors are for a project on etcd: give --store etcd://HOST:PORT/PREFIX, $CUSTODIAN_STORE or store: in .asdd/config.yaml (the file store's files are the documents themselves)")
			}
			s, err := OpenEtcd(u)
			if err != nil {
				return err
			}
			defer s.Close()
			root, err := app.Root()
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: slog.LevelInfo}))
			m, err := mirror.Open(root, mirror.Options{Source: s.Source(), Logger: log, Now: app.Now})
			if err != nil {
				return err
			}
			defer m.Close()
			ctx := app.Context(cmd)
			if !once {
				ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				log.Info("following the etcd documents; mirrors kept current until SIGINT or SIGTERM", "store", s.Source(), "root", root)
				return m.Run(ctx, s)
			}
			outs, err := m.Refresh(ctx, s)
			if outs == nil {
				outs = []mirror.Outcome{}
			}
			if rerr := app.Render(mirrorReport{Store: s.Source(), Documents: outs}, func(w io.Writer) error {
				return printMirrorOutcomes(w, outs)
			}); rerr != nil {
				return errors.Join(err, rerr)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "write every document's latest version once and exit")
	return cmd
}

func printMirrorOutcomes(w io.Writer, outs []mirror.Outcome) error {
	if len(outs) == 0 {
		_, err := fmt.Fprintln(w, "no documents in the store yet")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOCUMENT\tREV\tMIRROR")
	for _, o := range outs {
		what := string(o.Action)
		if e := o.Edit; e != nil {
			switch {
			case e.KeptAs != "":
				what += fmt.Sprintf(" (%s by hand: kept as %s)", e.Kind, e.KeptAs)
			default:
				what += fmt.Sprintf(" (%s by hand)", e.Kind)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", o.Key, o.Rev, what)
	}
	return tw.Flush()
}
