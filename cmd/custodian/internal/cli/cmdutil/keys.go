package cmdutil

// The documents' keys as a user types them: the key itself or a short
// name, and errors that list the keys there are.

import (
	"context"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
)

// ShortNames are the names a user may type for a document instead of its
// key (get, history, diff, rollback, watch, verify): asdd, impl, state and
// cycle/<id>.
const ShortNames = "asdd, impl, state, cycle/<id>"

// ResolveKey turns a document name as typed into its key: a short name
// (asdd, impl, state, cycle/<id>) becomes the document's key; anything else
// is taken as the key itself.
func ResolveKey(typed string) string {
	switch typed {
	case "asdd":
		return asdd.Key
	case "impl":
		return impl.Key
	case "state":
		return agentstate.Key
	}
	if id, ok := strings.CutPrefix(typed, "cycle/"); ok && id != "" && !strings.Contains(id, "/") {
		return cycle.Key(strings.TrimSuffix(id, ".json"))
	}
	return strings.TrimPrefix(typed, "./")
}

// DocumentList says which documents this project has, for an error that
// needs a key: "the documents here: K1, K2; short names: …", or that none
// is committed yet. (Opening the store to list them creates no file.)
func (a *App) DocumentList(ctx context.Context) string {
	svc, err := a.Service()
	if err != nil {
		return "short names: " + ShortNames
	}
	keys, err := svc.Keys(ctx)
	if err != nil || len(keys) == 0 {
		return "no document is committed here yet (custodian init, custodian impl --init, custodian state init, custodian cycle create)"
	}
	return "the documents here: " + strings.Join(keys, ", ") + "; short names: " + ShortNames
}

// NoDocument turns the store's NOT_FOUND for a key it does not have into
// one that lists the keys there are and, when the name typed is the last
// part of one or more of them, suggests those. Any other error is returned
// as it is.
func (a *App) NoDocument(ctx context.Context, typed, key string, err error) error {
	if reason.CodeOf(err) != reason.NotFound {
		return err
	}
	svc, serr := a.Service()
	if serr != nil {
		return err
	}
	keys, kerr := svc.Keys(ctx)
	if kerr != nil {
		return err
	}
	var like []string
	for _, k := range keys {
		if k == key {
			return err // the document exists: the error is about something else (a revision)
		}
		if path.Base(k) == path.Base(key) || strings.HasSuffix(k, "/"+strings.TrimPrefix(key, "/")) {
			like = append(like, k)
		}
	}
	name := typed
	if key != typed {
		name = typed + " (" + key + ")"
	}
	if len(like) > 0 {
		return reason.New(reason.NotFound, "no document %s: did you mean %s? %s", name, strings.Join(like, " or "), a.DocumentList(ctx))
	}
	return reason.New(reason.NotFound, "no document %s; %s", name, a.DocumentList(ctx))
}

// KeyArgs is a command's cobra.PositionalArgs for "KEY" followed by n more
// arguments (named in more, e.g. "REV1 REV2"): missing ones are a usage
// error that says what is expected and lists the documents there are.
func KeyArgs(app *App, more ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		want := 1 + len(more)
		if len(args) == want {
			return nil
		}
		form := strings.Join(append([]string{cmd.Name(), "KEY"}, more...), " ")
		if len(args) > want {
			return reason.Usage("%s takes %d argument(s), got %d: custodian %s", cmd.Name(), want, len(args), form)
		}
		if len(args) > 0 {
			return reason.Usage("%s needs %s after the KEY: custodian %s", cmd.Name(), strings.Join(more[len(args)-1:], " "), form)
		}
		return reason.Usage("%s needs the document's KEY: custodian %s; %s", cmd.Name(), form, app.DocumentList(app.Context(cmd)))
	}
}
