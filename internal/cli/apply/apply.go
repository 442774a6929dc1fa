package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/wire"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// custodian apply: a jq program run inside a custodian commit — the
// state-manager plugins' `state_update '<jq>'` with the custodian as the
// writer (DESIGN.md §8, drop-ins).

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
	args                       []wire.JQArg
	ifRevision                 *uint64
	quiet                      bool
}

// NewCmd returns `custodian apply`.
func NewCmd(app *cmdutil.App) *cobra.Command {
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
func parseApplyArgs(app *cmdutil.App, argv []string) (*applyArgs, error) {
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
				a.args = append(a.args, appl.StringArg(n, v))
			} else {
				if _, err := compat.JSONArg(n, v); err != nil {
					return nil, err
				}
				a.args = append(a.args, wire.JQArg{Name: n, Value: json.RawMessage(v)})
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

func runApply(app *cmdutil.App, ctx context.Context, a *applyArgs) error {
	svc, err := app.Service()
	if err != nil {
		return err
	}
	res, err := svc.ApplyJQ(ctx, wire.JQRequest{Key: a.key, Program: a.program, Args: a.args, Touch: a.touch, IfRevision: a.ifRevision, Actor: cmdutil.Actor(a.actor)})
	if err != nil {
		return err
	}
	if a.quiet && !app.JSON {
		return nil
	}
	return app.Render(map[string]any{"key": a.key, "revision": res.Revision, "value": jsonRaw(res.Value)}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s revision %d\n", a.key, res.Revision)
		return err
	})
}

type jsonRaw []byte

func (j jsonRaw) MarshalJSON() ([]byte, error) { return j, nil }
