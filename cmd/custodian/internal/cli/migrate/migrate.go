package migrate

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/storeopen"
	"github.com/custodian-dev/custodian/daemon"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd/migrate"
)

type migrateReport struct {
	From      string        `json:"from"`
	To        string        `json:"to"`
	Documents []migrate.Doc `json:"documents"`
}

// Options is what `custodian migrate` was asked to do.
type Options struct {
	App  *cmdutil.App
	To   string   // etcd://… or file
	From string   // the etcd source for To file ("": --store, $CUSTODIAN_STORE or the config's store:)
	Keys []string // only these documents (none: all)
}

// NewCmd returns `custodian migrate`; it parses the command line
// into Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	cmd := &cobra.Command{
		Use:   "migrate --to etcd://HOST:PORT[,HOST:PORT]/PREFIX | --to file",
		Short: "Copy the project's state between the file store and etcd, journals and all, and verify it",
		Long: `Copy every document (or --key ones) with its whole journal from one store
backend to the other. Journal records are copied byte for byte, so the hash
chains verify on the other side; each copied document is verified there.
Nothing is deleted from the source and nothing on the target is overwritten:
a document that already exists there stops the migration before anything is
written.

  --to etcd://…   the source is the project's file store (-C)
  --to file       the source is --from, else --store / $CUSTODIAN_STORE, else
                  store: in .asdd/config.yaml; the target is the project's
                  file store (-C)

Stop the agents (and the daemon) while migrating, then point them at the new
store (store: in .asdd/config.yaml, or $CUSTODIAN_STORE).`,
		Example: `  custodian migrate --to etcd://10.0.0.5:2379,10.0.0.6:2379/team/proj
  custodian migrate --to file --from etcd://10.0.0.5:2379/team/proj`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "target: etcd://HOST:PORT[,HOST:PORT]/PREFIX or file (required)")
	cmd.Flags().StringVar(&opts.From, "from", "", "source etcd URL for --to file (default: --store, $CUSTODIAN_STORE or the config's store:)")
	cmd.Flags().StringArrayVar(&opts.Keys, "key", nil, "copy only this document `KEY` (repeatable; default: all)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// run copies the documents with their journals and verifies each copy.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	to, from, keys := opts.To, opts.From, opts.Keys
	root, err := app.Root()
	if err != nil {
		return err
	}
	var (
		src    store.Store
		dst    migrate.Target
		report = migrateReport{Documents: []migrate.Doc{}}
	)
	switch {
	case storeopen.IsEtcdURL(to):
		if from != "" {
			return reason.Usage("--from is for --to file; --to etcd copies the project's file store")
		}
		fs, err := app.OpenFileStore()
		if err != nil {
			return err
		}
		defer fs.Close()
		es, err := storeopen.OpenEtcd(to)
		if err != nil {
			return err
		}
		defer es.Close()
		src, dst = fs, es
		report.From, report.To = "file:"+root, to
	case to == "file":
		if from == "" {
			if from, err = storeopen.ConfiguredStoreURL(app); err != nil {
				return err
			}
		}
		if !storeopen.IsEtcdURL(from) {
			return reason.Usage("--to file needs an etcd source: --from etcd://…, --store, $CUSTODIAN_STORE or store: in .asdd/config.yaml")
		}
		es, err := storeopen.OpenEtcd(from)
		if err != nil {
			return err
		}
		defer es.Close()
		src, dst = es, migrate.FileTarget{Root: root}
		report.From, report.To = from, "file:"+root
	default:
		return reason.Usage("--to must be etcd://HOST:PORT/PREFIX or file")
	}
	report.From, report.To = redactURL(report.From), redactURL(report.To)
	docs, err := migrate.Copy(ctx, src, dst, keys, func(d migrate.Doc) {
		if !app.JSON {
			fmt.Fprintf(app.Out, "copied %s: revision %d, %d records, verified\n", d.Key, d.Revision, d.Records)
		}
	})
	if err != nil {
		return err
	}
	report.Documents = append(report.Documents, docs...)
	return app.Render(report, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%d documents copied from %s to %s and verified\n", len(docs), report.From, report.To)
		return err
	})
}

// redactURL drops a password from a store URL for printing.
func redactURL(u string) string { return daemon.RedactURL(u) }
