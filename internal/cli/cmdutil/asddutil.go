package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// asddConfig reads .asdd/config.yaml; a missing file means the defaults.
func ASDDConfig(app *App) (*asdd.Config, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	b, err := ReadProjectFile(filepath.Join(root, filepath.FromSlash(asdd.ConfigPath)))
	if errors.Is(err, fs.ErrNotExist) {
		return asdd.DefaultConfig(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", asdd.ConfigPath, err)
	}
	return asdd.ParseConfig(b)
}

// ErrNoASDDManifest is the error for a project without an ASDD manifest:
// it says to run custodian init.
var ErrNoASDDManifest = reason.New(reason.NotFound, "no ASDD manifest at %s: run `custodian init` first", asdd.Key)

// NoManifestHint turns the store's "no document" for the ASDD manifest into
// errNoASDDManifest, which says to run custodian init.
func NoManifestHint(err error) error {
	if e, ok := reason.As(err); ok && e.Code == reason.NotFound && strings.HasPrefix(e.Message, "no document "+asdd.Key) {
		return ErrNoASDDManifest
	}
	return err
}

// LoadManifest returns the committed manifest.
func LoadManifest(ctx context.Context, app *App) (*asdd.Manifest, error) {
	st, err := app.Store()
	if err != nil {
		return nil, err
	}
	doc, err := st.Get(ctx, asdd.Key)
	if reason.CodeOf(err) == reason.NotFound {
		return nil, ErrNoASDDManifest
	}
	if err != nil {
		return nil, err
	}
	if !doc.Exists() {
		return nil, ErrNoASDDManifest
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

// CommitResult is what a mutating command reports: the operation's
// response, as the API gives it (committed and outcome say whether state
// changed; a rejection is an error and changes nothing).
type CommitResult = wire.OpResponse

// ApplyOp runs op through the application layer (the daemon's when one
// runs): the rules, the commit and the file effects. A committed halt
// comes back with its Verdict set. The outcome carries no manifest.
func ApplyOp(ctx context.Context, app *App, op asdd.Op) (*asdd.Outcome, *CommitResult, error) {
	svc, err := app.Service()
	if err != nil {
		return nil, nil, err
	}
	resp, err := svc.ASDD(ctx, op)
	if err != nil {
		return nil, nil, Rejected(NoManifestHint(err))
	}
	if _, remote := svc.(*AppRemote); remote {
		for _, w := range resp.Warnings {
			fmt.Fprintf(app.Err, "custodian: warning: committed revision %d, but: %s\n", resp.Revision, w)
		}
	}
	return &asdd.Outcome{Summary: resp.Summary, Events: resp.Events, Verdict: resp.Verdict}, resultOf(resp), nil
}

// resultOf is the command's report of an operation's response.
func resultOf(resp *wire.OpResponse) *CommitResult {
	r := *resp
	if r.Events == nil {
		r.Events = []asdd.Event{}
	}
	return &r
}

// RejectedError is an operation the rules (or the input checks) refused:
// nothing was committed. Its text and --json say so.
type RejectedError struct{ err error }

func (e *RejectedError) Error() string { return e.err.Error() }

func (e *RejectedError) Unwrap() error { return e.err }

// Rejected marks a refusal with a reason code as a rejection.
func Rejected(err error) error {
	if _, ok := reason.As(err); !ok {
		return err
	}
	if errors.As(err, new(*RejectedError)) {
		return err
	}
	return &RejectedError{err}
}

// Finish renders a commit result and turns a committed halt into the
// verdict's exit code.
func Finish(app *App, r *CommitResult, text func(w io.Writer) error) error {
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

// ParseArtifactFlags turns NAME=PATH flags into hashed artifacts.
func ParseArtifactFlags(p *effects.Project, flags []string, marker string) ([]asdd.Artifact, error) {
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

// OpenProject opens the project root for reading artifacts.
func OpenProject(app *App) (*effects.Project, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	return effects.Open(root)
}

// Required is a usage error when the flag --name was not given a value.
func Required(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return reason.Usage("--%s is required", name)
	}
	return nil
}

// ParseScore parses --score: a number in [0, 1].
func ParseScore(s string) (float64, error) {
	if s == "" {
		return 0, reason.Usage("--score is required")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, reason.New(reason.InvalidInput, "score %q is not a number", s)
	}
	return v, nil
}

// OptInt returns a pointer to v when the flag was given.
func OptInt(cmd *cobra.Command, name string, v int) *int {
	if !cmd.Flags().Changed(name) {
		return nil
	}
	return &v
}

// SliceResult adds the slice's committed state to a result.
func SliceResult(out *asdd.Outcome, r *CommitResult, id string) {
	if out != nil && out.Manifest != nil {
		r.Slice = out.Manifest.Slice(id)
	}
}

// Dash is s, or "-" for an empty s (a table cell).
func Dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// CCSText is a CCS for a table: three decimals, or "-" when not computed.
func CCSText(v *float64) string {
	if v == nil {
		return "—"
	}
	return asdd.FormatScore(*v)
}

// SliceHashes hashes every artifact the slice names, for a human sign-off.
func SliceHashes(ctx context.Context, app *App, id string) (map[string]string, error) {
	m, err := LoadManifest(ctx, app)
	if err != nil {
		return nil, err
	}
	s, err := m.Find(id)
	if err != nil {
		return nil, err
	}
	p, err := OpenProject(app)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	obs, err := p.Observe(s.Artifacts())
	if err != nil {
		return nil, err
	}
	for k, v := range obs {
		if v == "" {
			delete(obs, k)
		}
	}
	return obs, nil
}

// Actor returns who this process acts as: --actor, $CUSTODIAN_ACTOR, or the
// OS user name.
func Actor(flag string) string {
	if flag != "" {
		return flag
	}
	if a := os.Getenv("CUSTODIAN_ACTOR"); a != "" {
		return a
	}
	if u := os.Getenv("USER"); u != "" {
		return "user:" + u
	}
	return "user"
}

// ParseRev parses a revision number given on the command line.
func ParseRev(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, reason.Usage("revision %q is not a number", s)
	}
	return n, nil
}
