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

type verifyResult struct {
	Key      string `json:"key"`
	OK       bool   `json:"ok"`
	Revision uint64 `json:"revision"`
	Code     string `json:"code,omitempty"`
	Problem  string `json:"problem,omitempty"`
	// Recovery lists what an ordinary crash left that the next command
	// recovers, and how: not corruption (exit 0).
	Recovery []string `json:"recovery,omitempty"`
	// Anchored is the revision the journal's anchor names; Authenticated,
	// that the journal key checked the anchor and the records' MACs.
	Anchored      uint64 `json:"anchored,omitempty"`
	Authenticated bool   `json:"authenticated,omitempty"`
}

// VerifyOptions is what `custodian verify` was asked to do.
type VerifyOptions struct {
	App  *cmdutil.App
	Keys []string // the documents (none: every one)
}

// NewVerifyCmd returns `custodian verify`; it parses the command line
// into VerifyOptions and calls runF with them (runVerify when runF is nil).
func NewVerifyCmd(app *cmdutil.App, runF func(context.Context, *VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{App: app}
	return &cobra.Command{
		Use:   "verify [KEY...]",
		Short: "Check journals' hash chains and that replaying them reproduces each snapshot (exit 5 if not)",
		Long: `Check each document (all of them when no KEY is given): every journal record's
hash and its link to the one before, across all segments; that replaying the
journal reproduces every recorded value and the snapshot; that the journal
reaches its anchor (.head: the head's revision and hash, rewritten at every
commit) through the record it names; with a journal key
($CUSTODIAN_JOURNAL_KEY or $CUSTODIAN_JOURNAL_KEY_FILE), the anchor's and the
records' MACs. Nothing is repaired.

What an ordinary crash leaves — a snapshot behind its journal with an
interrupted rewrite's .tmp beside it, a torn last record, an empty journal
from a crash in a document's first commit — is not corruption: verify says
what the next command's recovery will do and exits 0. Anything else exits 5
(CORRUPT_STATE), naming the file and the revision; docs/store.md says what
is and is not detected. In a directory that is no project (no .asdd, .impl,
.agents/tmp or .workflow/.cycle at or above it) verify exits 3 (NOT_FOUND),
so that a CI job run in the wrong directory fails.`,
		Example: `  custodian verify
  custodian verify .asdd/state/manifest.json --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			return cmdutil.Run(app, cmd, opts, runF, runVerify)
		},
	}
}

// runVerify checks each document through the application layer and
// prints what it found; corruption exits 5.
func runVerify(ctx context.Context, opts *VerifyOptions) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	keys := make([]string, len(opts.Keys))
	for i, k := range opts.Keys {
		keys[i] = cmdutil.ResolveKey(k)
	}
	if len(keys) == 0 {
		var files bool
		if keys, files, err = svc.VerifyKeys(ctx); err != nil {
			return err
		}
		if len(keys) == 0 && files {
			// Nothing to verify because there is no project here:
			// fail, as a CI job in the wrong directory should.
			if err := app.RequireProject(); err != nil {
				return err
			}
		}
	}
	results := make([]verifyResult, 0, len(keys))
	bad := 0
	for _, k := range keys {
		r := verifyResult{Key: k, OK: true}
		rep, err := svc.Verify(ctx, k)
		r.Revision, r.Recovery, r.Anchored, r.Authenticated = rep.Revision, rep.Recovery, rep.Anchored, rep.Authenticated
		if err != nil {
			r.OK, r.Problem, r.Code = false, err.Error(), string(reason.CodeOf(err))
			if e, ok := reason.As(err); ok {
				r.Problem = e.Message
			}
			r.Problem = strings.TrimPrefix(r.Problem, k+": ")
			if r.Code == "" {
				// Whatever keeps a state file from being read
				// is an integrity problem, not an internal one.
				r.Code = string(reason.CorruptState)
			}
			bad++
		}
		results = append(results, r)
	}
	err = app.Render(results, func(w io.Writer) error {
		for _, r := range results {
			switch {
			case !r.OK && r.Code == string(reason.CorruptState):
				fmt.Fprintf(w, "CORRUPT  %s: %s\n", r.Key, r.Problem)
			case !r.OK:
				fmt.Fprintf(w, "%-8s %s: %s\n", r.Code, r.Key, r.Problem)
			case len(r.Recovery) > 0:
				fmt.Fprintf(w, "ok       %s (revision %d; recoverable crash state)\n", r.Key, r.Revision)
				for _, what := range r.Recovery {
					fmt.Fprintf(w, "           %s\n", what)
				}
			default:
				auth := ""
				if r.Authenticated {
					auth = ", authenticated"
				}
				fmt.Fprintf(w, "ok       %s (revision %d%s)\n", r.Key, r.Revision, auth)
			}
		}
		if len(results) == 0 {
			fmt.Fprintln(w, "no documents")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		// Corruption first; otherwise what kept verify from
		// looking (a daemon holding the lock: 4).
		code := reason.ExitIntegrity
		for _, r := range results {
			if !r.OK && r.Code != string(reason.CorruptState) {
				code = reason.Code(r.Code).ExitCode()
			}
		}
		for _, r := range results {
			if !r.OK && r.Code == string(reason.CorruptState) {
				code = reason.ExitIntegrity
			}
		}
		return &cmdutil.ExitError{Code: code}
	}
	return nil
}
