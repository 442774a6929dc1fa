package cycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/wire"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

// The dev cycle's drop-ins (DESIGN.md §8): the orchestrator rewrites a
// whole cycle document (put, a compare-and-swap on its revision) and the
// workers append NDJSON lines to coordination logs (append).

func (c *cycleCLI) putCmd() *cobra.Command {
	var from string
	var rev int64
	cmd := &cobra.Command{
		Use:   "put ID --if-revision N [--file FILE|-]",
		Short: "Replace a cycle document as a whole, if it is still at revision N (compare-and-swap)",
		Long: `Replace .workflow/.cycle/ID.json with the JSON document read from --file (or
stdin), if the cycle is still at revision N (0: it does not exist yet): the
orchestrator's read-modify-write of the whole file, without lost updates.
The new document must be a valid cycle with that cycleId and keep the
cycle's rules against the current one (history only grows); otherwise
nothing changes. A stale N is CONFLICT (exit 4): read again
(custodian --json get .workflow/.cycle/ID.json gives value and revision),
reapply, retry. Prints "ID revision M".`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := cycle.CheckID(id); err != nil {
				return err
			}
			if rev < 0 {
				return reason.Usage("--if-revision %d: a revision is 0 or more", rev)
			}
			body, err := c.readInput(from)
			if err != nil {
				return err
			}
			next, err := cycle.Decode(body)
			if err != nil {
				return reason.New(reason.InvalidInput, "%s is not a cycle document: %s", inputName(from), messageOf(err))
			}
			if next.CycleID != id {
				return reason.New(reason.InvalidInput, "the document is cycle %q, not %s", next.CycleID, id)
			}
			r := uint64(rev)
			return c.run(cmd, wire.CycleRequest{ID: id, Op: "put", Args: body, IfRevision: &r, Actor: c.actorOr("")}, func(w io.Writer, resp *wire.CycleResponse) error {
				_, err := fmt.Fprintf(w, "%s revision %d\n", id, resp.Revision)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&from, "file", "-", "the new document (- for stdin)")
	cmd.Flags().Int64Var(&rev, "if-revision", -1, "the revision the document must still be at (0: absent) (required)")
	cmdutil.MarkRequired(cmd, "if-revision")
	return cmd
}

// AppendOptions is what `custodian cycle append` was asked to do.
type AppendOptions struct {
	App     *cmdutil.App
	ID      string
	Log     string   // the log's path relative to the cycle's .progress directory
	Records [][]byte // the records, each one compact JSON value
}

func newAppendCmd(app *cmdutil.App, runF func(context.Context, *AppendOptions) error) *cobra.Command {
	opts := &AppendOptions{App: app}
	var line string
	cmd := &cobra.Command{
		Use:   "append ID --log NAME [--line JSON]",
		Short: "Append JSON records to a cycle's NDJSON coordination log, one whole line each, durably",
		Long: `Append to .workflow/.cycle/ID.progress/NAME (e.g. coordination/discoveries.ndjson)
the JSON value given with --line, or every non-empty line of stdin: each is
checked to be JSON and written compact on its own line. All records of one
call go in one write under an exclusive lock on the log, then fsync, so
concurrent writers never interleave or tear lines, and a record is on disk
when the command returns. The cycle must exist. Prints the number of
records appended.`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if err := cycle.CheckID(opts.ID); err != nil {
				return err
			}
			if _, err := cycle.LogPath(opts.ID, opts.Log); err != nil {
				return err
			}
			opts.Records = nil
			if cmd.Flags().Changed("line") {
				r, err := cycle.CompactRecord([]byte(line))
				if err != nil {
					return reason.New(reason.InvalidInput, "--line: %v", err)
				}
				opts.Records = append(opts.Records, r)
			} else {
				sc := bufio.NewScanner(app.In)
				sc.Buffer(make([]byte, 64<<10), cycle.MaxLogRecord)
				for n := 1; sc.Scan(); n++ {
					if len(bytes.TrimSpace(sc.Bytes())) == 0 {
						continue
					}
					r, err := cycle.CompactRecord(sc.Bytes())
					if err != nil {
						return reason.New(reason.InvalidInput, "stdin line %d: %v (nothing appended)", n, err)
					}
					opts.Records = append(opts.Records, r)
				}
				if err := sc.Err(); err != nil {
					return reason.New(reason.InvalidInput, "read stdin: %v (nothing appended)", err)
				}
			}
			if len(opts.Records) == 0 {
				return reason.Usage("nothing to append: give --line JSON or lines on stdin")
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Log, "log", "", "the log, relative to the cycle's .progress directory, ending in .ndjson (required)")
	cmd.Flags().StringVar(&line, "line", "", "one JSON value to append (default: the lines of stdin)")
	cmdutil.MarkRequired(cmd, "log")
	return cmd
}

// runAppend has the application layer (the daemon's, when one runs) append
// the records to the log of an existing cycle.
func runAppend(ctx context.Context, opts *AppendOptions) error {
	app := opts.App
	records := make([]json.RawMessage, len(opts.Records))
	for i, r := range opts.Records {
		records[i] = r
	}
	args, err := json.Marshal(wire.CycleAppend{Log: opts.Log, Records: records})
	if err != nil {
		return err
	}
	svc, err := app.Service()
	if err != nil {
		return err
	}
	r, err := svc.UpdateCycle(ctx, wire.CycleRequest{ID: opts.ID, Op: "append", Args: args})
	if err != nil {
		return err
	}
	return app.Render(map[string]any{"cycle_id": r.CycleID, "log": r.Log, "appended": r.Appended}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "appended %s to %s\n", cmdutil.Plural(r.Appended, "record"), r.Log)
		return err
	})
}
