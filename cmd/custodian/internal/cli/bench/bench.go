package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/progress"
)

// NewCmd returns `custodian bench`.
func NewCmd(app *cmdutil.App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Custodian against this machine's bare disk costs",
	}
	cmd.AddCommand(NewStoreCmd(app, nil))
	cmd.AddCommand(newBenchDaemonCmd(app))
	cmd.AddCommand(newBenchMCPCmd(app))
	return cmd
}

type storeBenchReport struct {
	Baselines []bench.Result `json:"baselines"`
	Results   []bench.Result `json:"results"`
}

// StoreOptions is what `custodian bench store` was asked to do.
type StoreOptions struct {
	App      *cmdutil.App
	Duration time.Duration // per measurement
	Writers  []int         // concurrent writers
	Sizes    []int         // document sizes in bytes
}

// NewStoreCmd returns `custodian bench store`; it parses the command line
// into StoreOptions and calls runF with them (runStore when runF is nil).
func NewStoreCmd(app *cmdutil.App, runF func(context.Context, *StoreOptions) error) *cobra.Command {
	opts := &StoreOptions{App: app}
	var writers, sizes string
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Commits/s and p50/p99 latency of the file store, next to bare append+fsync and temp+rename costs",
		Long: `Measures durable commits through the embedded file store with 1, 8 and 64
concurrent writers on documents of 10 KB and 1 MB, and in the same run the
machine's bare cost of the physical work: append+fsync of a journal-sized
record, and temp file + fsync + rename + directory fsync of each document
size. Ratios compare each figure to the bare cost, which is what carries
across machines. The scratch files live in a temporary directory under the
project root (-C), so they are on the same file system, and are removed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := cmdutil.ParseInts(writers)
			if err != nil {
				return err
			}
			ss, err := cmdutil.ParseSizes(sizes)
			if err != nil {
				return err
			}
			opts.Writers, opts.Sizes = ws, ss
			return cmdutil.Run(app, cmd, opts, runF, runStore)
		},
	}
	cmd.Flags().DurationVar(&opts.Duration, "duration", time.Second, "time spent on each measurement")
	cmd.Flags().StringVar(&writers, "writers", "1,8,64", "concurrent writer counts")
	cmd.Flags().StringVar(&sizes, "sizes", "10KB,1MB", "document sizes")
	return cmd
}

// runStore measures the bare costs, then the file store, and prints both.
func runStore(ctx context.Context, opts *StoreOptions) error {
	app := opts.App
	ws, ss, duration := opts.Writers, opts.Sizes, opts.Duration
	root, err := app.Root()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(root, ".custodian-bench-")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(tmp)
	// On a terminal a bar counts the measurements; elsewhere each
	// one is announced on its own line (not with --json).
	bar := progress.Start(app.Err, 1+len(ss)+len(ss)*len(ws), "bench store")
	defer bar.Finish()
	step := 0
	progress := func(format string, a ...any) {
		switch {
		case bar.Shown():
			bar.Describe(format, a...)
		case !app.JSON:
			fmt.Fprintf(app.Err, format+"\n", a...)
		}
		if step > 0 {
			bar.Add(1) // the previous measurement is done
		}
		step++
	}
	var rep storeBenchReport
	progress("measuring bare append+fsync…")
	app0, err := bench.BareAppend(tmp, 300, duration)
	if err != nil {
		return err
	}
	rep.Baselines = append(rep.Baselines, app0)
	replace := map[int]bench.Result{}
	for _, sz := range ss {
		progress("measuring bare temp+fsync+rename+dirsync of %d bytes…", sz)
		r, err := bench.BareReplace(tmp, sz, duration)
		if err != nil {
			return err
		}
		replace[sz] = r
		rep.Baselines = append(rep.Baselines, r)
	}
	for _, sz := range ss {
		for _, w := range ws {
			progress("measuring the file store: %d writer(s), %d-byte document…", w, sz)
			dir, err := os.MkdirTemp(tmp, "run-")
			if err != nil {
				return err
			}
			r, err := bench.StoreCommits(dir, w, sz, duration)
			if err != nil {
				return err
			}
			base := replace[sz]
			r.Baseline = base.Name
			if base.PerSecond > 0 {
				r.Ratio = r.PerSecond / base.PerSecond
			}
			rep.Results = append(rep.Results, r)
		}
	}
	bar.Add(1)
	bar.Finish()
	return app.Render(rep, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "WHAT\tOPS/S\tP50\tP99\tVS BARE REPLACE\t")
		for _, r := range rep.Baselines {
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t\t\n", r.Name, r.PerSecond, cmdutil.Ms(r.P50), cmdutil.Ms(r.P99))
		}
		for _, r := range rep.Results {
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%.2f×\t\n", r.Name, r.PerSecond, cmdutil.Ms(r.P50), cmdutil.Ms(r.P99), r.Ratio)
		}
		return tw.Flush()
	})
}
