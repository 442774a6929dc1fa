package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/storeopen"
	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/reason"
)

type mirrorReport struct {
	Store     string           `json:"store"`
	Documents []mirror.Outcome `json:"documents"`
}

// Options is what `custodian mirror` was asked to do.
type Options struct {
	App  *cmdutil.App
	Once bool // write every document's latest version once and exit
}

// NewCmd returns `custodian mirror`; it parses the command line
// into Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
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

Each mirror is written atomically and its revision is recorded in the state
file .mirror of its directory (jq '.documents["manifest.json"].rev'
.impl/.mirror). A mirror edited or deleted by hand is restored from the store; the
edited file is kept as <file>.direct-edit-<time> and an escalation notice is
written under .asdd/escalations/.`,
		Example: `  custodian --store etcd://10.0.0.5:2379/team/proj mirror --once
  custodian mirror &        # follow the cluster without a daemon`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "write every document's latest version once and exit")
	return cmd
}

// run refreshes the mirrors once, or follows the etcd documents until interrupted.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	u, err := storeopen.ConfiguredStoreURL(app)
	if err != nil {
		return err
	}
	if !storeopen.IsEtcdURL(u) {
		return reason.Usage("mirrors are for a project on etcd: give --store etcd://HOST:PORT/PREFIX, $CUSTODIAN_STORE or store: in .asdd/config.yaml (the file store's files are the documents themselves)")
	}
	s, err := storeopen.OpenEtcd(u)
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
	if !opts.Once {
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

// Lag is how far one local mirror is behind the store, for
// `custodian status`.
type Lag struct {
	Key       string `json:"key"`
	StoreRev  uint64 `json:"store_rev"`
	MirrorRev uint64 `json:"mirror_rev"`
	Behind    uint64 `json:"behind"`
	// State is the mirror's: ok, missing, edited, untracked.
	State string `json:"state"`
	// AgeSeconds is how long ago the mirror's revision was written.
	AgeSeconds *float64 `json:"age_seconds,omitempty"`
}

// Lags reports every document's mirror against the store, on a
// project whose store is etcd (configured here, or served by a daemon that
// mirrors into this directory); nil otherwise. It reads the store without
// refreshing the mirrors, so it shows them as they were: the store as it
// is (app.Store, unwrapped), not the application layer's reads, which
// refresh them.
func Lags(ctx context.Context, app *cmdutil.App) ([]Lag, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	u, err := storeopen.ConfiguredStoreURL(app)
	if err != nil {
		return nil, err
	}
	if !storeopen.IsEtcdURL(u) {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(mirror.StatePath(asdd.Key)))); err != nil {
			return nil, nil
		}
	}
	st, err := app.Store()
	if err != nil {
		return nil, err
	}
	if w, ok := st.(*mirror.Store); ok {
		st = w.Unwrap()
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	lags := []Lag{}
	for _, k := range keys {
		d, err := st.Get(ctx, k)
		if reason.CodeOf(err) == reason.NotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		ms, err := mirror.Read(root, k)
		if err != nil {
			return nil, err
		}
		l := Lag{Key: k, StoreRev: d.Revision, MirrorRev: ms.Rev, State: ms.State}
		if d.Revision > ms.Rev {
			l.Behind = d.Revision - ms.Rev
		}
		if !ms.Written.IsZero() {
			age := app.Now().Sub(ms.Written).Seconds()
			l.AgeSeconds = &age
		}
		lags = append(lags, l)
	}
	return lags, nil
}

// WriteLags is the board's mirror section.
func WriteLags(w io.Writer, lags []Lag) {
	if lags == nil {
		return
	}
	fmt.Fprintln(w, "\nMirrors (local read-only copies of the etcd documents):")
	if len(lags) == 0 {
		fmt.Fprintln(w, "  no documents yet")
	}
	for _, l := range lags {
		switch l.State {
		case "ok":
			behind := ", current"
			if l.Behind > 0 {
				behind = fmt.Sprintf(" (%d behind)", l.Behind)
			}
			age := ""
			if l.AgeSeconds != nil {
				age = ", written " + cmdutil.HumanAge(time.Duration(*l.AgeSeconds*float64(time.Second))) + " ago"
			}
			fmt.Fprintf(w, "  %s r%d of r%d%s%s\n", l.Key, l.MirrorRev, l.StoreRev, behind, age)
		case "missing":
			fmt.Fprintf(w, "  %s no mirror (store at r%d): custodian mirror --once writes it\n", l.Key, l.StoreRev)
		case "edited":
			fmt.Fprintf(w, "  %s EDITED BY HAND (store at r%d): the next refresh keeps the edit aside and restores it\n", l.Key, l.StoreRev)
		default:
			fmt.Fprintf(w, "  %s a file not written by a mirror (store at r%d): the next refresh keeps it aside unless it holds the store's value\n", l.Key, l.StoreRev)
		}
	}
}
