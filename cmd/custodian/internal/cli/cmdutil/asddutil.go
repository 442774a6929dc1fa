package cmdutil

// What the ASDD commands share: the manifest, an operation through the
// application layer, and its result.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// LoadManifest returns the committed manifest through the application
// layer (Service.Manifest: the daemon's while one runs); app.ErrNoManifest
// when there is none.
func LoadManifest(ctx context.Context, app *App) (*asdd.Manifest, error) {
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	return svc.Manifest(ctx)
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
		return nil, nil, Rejected(err)
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

// ParseArtifactFlags turns NAME=PATH flags into the artifacts an operation
// names, each PATH taken from the current directory and given to the
// operation from the project root (App.ProjectPath). It does not read them:
// the application layer hashes the files itself, whatever a caller sends,
// and its errors name the resolved path.
func ParseArtifactFlags(app *App, flags []string) ([]asdd.Artifact, error) {
	var out []asdd.Artifact
	for _, f := range flags {
		name, path, ok := strings.Cut(f, "=")
		if !ok || name == "" || path == "" {
			return nil, reason.Usage("--artifact wants NAME=PATH, got %q", f)
		}
		rel, err := app.ProjectPath(path)
		if err != nil {
			return nil, err
		}
		out = append(out, asdd.Artifact{Name: name, Path: rel})
	}
	return out, nil
}
