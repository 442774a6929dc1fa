package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// custodian apply: a jq program run inside a custodian commit — the
// state-manager plugins' `state_update '<jq>'` with the custodian as the
// writer (DESIGN.md §8, drop-ins).

func init() { Register("apply", newApplyCmd) }

const applyUsage = `Usage:
  custodian apply --key KEY --jq PROGRAM [--arg NAME VALUE]... [--argjson NAME JSON]...
                  [--touch FIELD] [--if-revision N] [--actor NAME] [--quiet]

Run a jq program on the document KEY (e.g. .agents/tmp/state.json) and commit
its result: the program runs on the latest committed value inside the
commit (re-run if another writer committed first), so concurrent updates are
never lost; the result must pass the document's rules (schema v2 for the
agent state, the cycle rules, the task manifest rules), else nothing changes.
A missing document starts as {}.

  --arg NAME VALUE      $NAME is the string VALUE (as jq --arg)
  --argjson NAME JSON   $NAME is the JSON value (as jq --argjson)
  --touch FIELD         then set .FIELD to the commit time (UTC, 2006-01-02T15:04:05Z)
  --if-revision N       commit only if the document is at revision N (0: absent)
  --quiet               print nothing on success
$ts is the commit time in that format unless --arg ts is given; the program
sees no environment. jq is github.com/itchyny/gojq (jq 1.7 language).

Prints "KEY revision N", or with --json {"key","revision","value"}.
Exit codes: 0 committed, 2 bad program or input, 3 rejected by the rules,
4 --if-revision did not match.
`

// applyArgs is one parsed `custodian apply` command line.
type applyArgs struct {
	key, program, touch, actor string
	args                       []compat.Arg
	ifRevision                 *uint64
	quiet                      bool
}

func newApplyCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:                "apply --key KEY --jq PROGRAM [--arg NAME VALUE] [--argjson NAME JSON] [--touch FIELD]",
		Short:              "Run a jq program on a document inside a custodian commit (drop-in for state_update)",
		Long:               "Run a jq program on a document inside a custodian commit (the state-manager plugins' state_update).\n\n" + applyUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, argv []string) error {
			a, err := parseApplyArgs(app, argv)
			if err != nil {
				return err
			}
			if a == nil {
				_, err := io.WriteString(app.Out, applyUsage)
				return err
			}
			return runApply(app, app.Context(cmd), a)
		},
	}
}

// parseApplyArgs parses the command line by hand: --arg and --argjson take
// two values, as in jq. Global flags after the command name (-C, --json)
// are taken too. nil, nil means --help.
func parseApplyArgs(app *App, argv []string) (*applyArgs, error) {
	a := &applyArgs{}
	usage := func(format string, args ...any) error { return reason.Usage(format, args...) }
	for i := 0; i < len(argv); i++ {
		name, inline, hasInline := strings.Cut(argv[i], "=")
		if !strings.HasPrefix(name, "-") || name == "--arg" || name == "--argjson" {
			hasInline = false
			name = argv[i]
		}
		value := func() (string, error) {
			if hasInline {
				return inline, nil
			}
			if i+1 >= len(argv) {
				return "", usage("%s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		var err error
		switch name {
		case "-h", "--help":
			return nil, nil
		case "--key":
			a.key, err = value()
		case "--jq":
			a.program, err = value()
		case "--touch":
			a.touch, err = value()
		case "--actor":
			a.actor, err = value()
		case "-C", "--dir":
			app.Dir, err = value()
		case "--json":
			app.JSON = true
		case "--quiet", "-q":
			a.quiet = true
		case "--if-revision":
			var s string
			if s, err = value(); err == nil {
				n, perr := strconv.ParseUint(s, 10, 64)
				if perr != nil {
					return nil, usage("--if-revision %q is not a revision number", s)
				}
				a.ifRevision = &n
			}
		case "--arg", "--argjson":
			if i+2 >= len(argv) {
				return nil, usage("%s needs a name and a value", name)
			}
			n, v := argv[i+1], argv[i+2]
			i += 2
			if name == "--arg" {
				a.args = append(a.args, compat.StringArg(n, v))
			} else {
				arg, err := compat.JSONArg(n, v)
				if err != nil {
					return nil, err
				}
				a.args = append(a.args, arg)
			}
		default:
			return nil, usage("unknown argument %q (custodian apply --help)", argv[i])
		}
		if err != nil {
			return nil, err
		}
	}
	if a.key == "" || a.program == "" {
		return nil, usage("apply needs --key KEY and --jq PROGRAM")
	}
	if err := store.CheckKey(a.key); err != nil {
		return nil, err
	}
	if a.touch != "" && strings.ContainsAny(a.touch, ".[]\"") {
		return nil, usage("--touch %q: name a top-level field (e.g. updatedAt)", a.touch)
	}
	return a, nil
}

func runApply(app *App, ctx context.Context, a *applyArgs) error {
	program := a.program
	args := a.args
	now := app.Now().UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
	hasTS := false
	for _, x := range args {
		hasTS = hasTS || x.Name == "ts"
	}
	if !hasTS {
		args = append(args, compat.StringArg("ts", now))
	}
	if a.touch != "" {
		program = "(" + program + ") | .[$__custodian_touch] = $__custodian_now"
		args = append(args, compat.StringArg("__custodian_touch", a.touch), compat.StringArg("__custodian_now", now))
	}
	var opts []store.UpdateOption
	if a.ifRevision != nil {
		opts = append(opts, store.IfRevision(*a.ifRevision))
	}
	var value []byte
	res, err := applyJQ(app, ctx, a.key, Actor(a.actor), "jq: "+a.program, func(cur []byte) ([]byte, error) {
		if cur == nil {
			cur = []byte("{}")
		}
		next, err := compat.JQ(ctx, program, cur, args)
		value = next
		return next, err
	}, opts...)
	if err != nil {
		return err
	}
	if id, ok := cycleIDOf(a.key); ok {
		(&cycleCLI{app: app}).sync(ctx, id)
	}
	if a.quiet && !app.JSON {
		return nil
	}
	return app.Render(map[string]any{"key": a.key, "revision": res.Revision, "value": jsonRaw(value)}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s revision %d\n", a.key, res.Revision)
		return err
	})
}

type jsonRaw []byte

func (j jsonRaw) MarshalJSON() ([]byte, error) { return j, nil }

// cycleIDOf returns the cycle id of a cycle document key.
func cycleIDOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, cycle.Dir+"/")
	if !ok || strings.Contains(rest, "/") {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ".json")
	return id, ok && cycle.CheckID(id) == nil
}

// applyJQ commits fn's new value of key (fn gets the current value, nil
// when the document does not exist) after the document's rules accept it
// (app.DocumentRules: the same rules rollback and the HTTP document API run),
// through the command's store — the daemon when one runs. It is the one
// commit path of `apply` and `cycle put`.
func applyJQ(app *App, ctx context.Context, key, actor, why string, fn func(cur []byte) ([]byte, error), opts ...store.UpdateOption) (store.Result, error) {
	s, err := app.Store()
	if err != nil {
		return store.Result{}, err
	}
	opts = append([]store.UpdateOption{store.Create()}, opts...)
	return s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		var prev []byte
		if cur.Exists() {
			prev = cur.Value
		}
		next, err := fn(prev)
		if err != nil {
			return store.Change{}, err
		}
		if err := appl.DocumentRules.Validate(key, prev, next); err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: next, Actor: actor, Reason: why}, nil
	}, opts...)
}
