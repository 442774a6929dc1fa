package integrity

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
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

// wellKnownKeys are the documents verify looks at when none is named,
// besides those with a journal: a snapshot whose journal was deleted is
// reported, not skipped.
func wellKnownKeys(root string) []string {
	keys := []string{asdd.Key, impl.Key, agentstate.Key}
	if m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(cycle.Dir), "*.json")); err == nil {
		for _, p := range m {
			keys = append(keys, cycle.Dir+"/"+filepath.Base(p))
		}
	}
	var out []string
	for _, k := range keys {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(k))); err == nil && !fi.IsDir() {
			out = append(out, k)
		}
	}
	return out
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

// runVerify checks each document and prints what it found; corruption exits 5.
func runVerify(ctx context.Context, opts *VerifyOptions) error {
	app := opts.App
	s, err := app.Store()
	if err != nil {
		return err
	}
	keys := make([]string, len(opts.Keys))
	for i, k := range opts.Keys {
		keys[i] = cmdutil.ResolveKey(k)
	}
	if len(keys) == 0 {
		if keys, err = s.Keys(ctx); err != nil {
			return err
		}
		if _, ok := s.(*file.Store); ok {
			if root, err := app.Root(); err == nil {
				keys = append(keys, wellKnownKeys(root)...)
				slices.Sort(keys)
				keys = slices.Compact(keys)
			}
		}
	}
	if len(keys) == 0 && len(opts.Keys) == 0 {
		if _, ok := s.(*file.Store); ok {
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
		var err error
		if fs, ok := s.(*file.Store); ok {
			var rep file.VerifyReport
			rep, err = fs.VerifyDocument(ctx, k)
			r.Revision, r.Recovery, r.Anchored, r.Authenticated = rep.Revision, rep.Recovery, rep.Anchored, rep.Authenticated
		} else if err = s.Verify(ctx, k); err == nil {
			if recs, herr := s.History(ctx, k, 0, 0); herr == nil && len(recs) > 0 {
				r.Revision = recs[len(recs)-1].Rev
			}
		}
		if err == nil && k == asdd.Key {
			err = configDrift(ctx, app) // the config is state too
		}
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

// configDrift reports a .asdd/config.yaml other than the one the ASDD
// manifest pins (asdd.ConfigDrift).
func configDrift(ctx context.Context, app *cmdutil.App) error {
	m, err := cmdutil.LoadManifest(ctx, app)
	if err != nil {
		return nil // the manifest's own problems are VerifyDocument's
	}
	cfg, err := cmdutil.ASDDConfig(app)
	if err != nil {
		return err
	}
	return asdd.ConfigDrift(m, cfg)
}
