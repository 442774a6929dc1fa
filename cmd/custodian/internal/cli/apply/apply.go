package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
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

// Options is one parsed `custodian apply` command line.
type Options struct {
	App        *cmdutil.App
	Key        string       // the document
	Program    string       // the jq program
	Touch      string       // a top-level field set to the commit time
	Actor      string       // --actor ("": $CUSTODIAN_ACTOR or the OS user)
	Args       []wire.JQArg // --arg and --argjson
	IfRevision *uint64      // commit only at this revision
	Quiet      bool         // print nothing on success
}

// NewCmd returns `custodian apply`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	return &cobra.Command{
		Use:                "apply --key KEY --jq PROGRAM [--arg NAME VALUE] [--argjson NAME JSON] [--touch FIELD]",
		Short:              "Run a jq program on a document inside a custodian commit (drop-in for state_update)",
		Long:               "Run a jq program on a document inside a custodian commit (the state-manager plugins' state_update).\n\n" + applyUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts, err := parseArgs(app, argv)
			if err != nil {
				return err
			}
			if opts == nil {
				_, err := io.WriteString(app.Out, applyUsage)
				return err
			}
			opts.App = app
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
}

// parseArgs parses the command line by hand: --arg and --argjson take
// two values, as in jq. Global flags after the command name (-C, --json)
// are taken too. nil, nil means --help.
func parseArgs(app *cmdutil.App, argv []string) (*Options, error) {
	a := &Options{}
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
			a.Key, err = value()
		case "--jq":
			a.Program, err = value()
		case "--touch":
			a.Touch, err = value()
		case "--actor":
			a.Actor, err = value()
		case "-C", "--dir":
			app.Dir, err = value()
		case "--server":
			app.ServerURL, err = value()
		case "--store":
			app.StoreURL, err = value()
		case "--json":
			app.JSON = true
		case "--quiet", "-q":
			a.Quiet = true
		case "--if-revision":
			var s string
			if s, err = value(); err == nil {
				n, perr := strconv.ParseUint(s, 10, 64)
				if perr != nil {
					return nil, usage("--if-revision %q is not a revision number", s)
				}
				a.IfRevision = &n
			}
		case "--arg", "--argjson":
			if i+2 >= len(argv) {
				return nil, usage("%s needs a name and a value", name)
			}
			n, v := argv[i+1], argv[i+2]
			i += 2
			if name == "--arg" {
				if !utf8.ValidString(v) { // JSON would carry it as U+FFFD
					return nil, reason.New(reason.InvalidInput, "--arg %s is not valid UTF-8", n)
				}
				a.Args = append(a.Args, appl.StringArg(n, v))
			} else {
				if _, err := compat.JSONArg(n, v); err != nil {
					return nil, err
				}
				a.Args = append(a.Args, wire.JQArg{Name: n, Value: json.RawMessage(v)})
			}
		default:
			return nil, usage("unknown argument %q (custodian apply --help)", argv[i])
		}
		if err != nil {
			return nil, err
		}
	}
	if a.Key == "" || a.Program == "" {
		return nil, usage("apply needs --key KEY and --jq PROGRAM")
	}
	a.Key = cmdutil.ResolveKey(a.Key) // state, cycle/<id>
	if err := store.CheckKey(a.Key); err != nil {
		return nil, err
	}
	if !utf8.ValidString(a.Program) { // JSON would carry it as U+FFFD
		return nil, reason.New(reason.InvalidInput, "the jq program is not valid UTF-8")
	}
	if a.Touch != "" && strings.ContainsAny(a.Touch, ".[]\"") {
		return nil, usage("--touch %q: name a top-level field (e.g. updatedAt)", a.Touch)
	}
	return a, nil
}

// run commits the program's result through the application layer.
func run(ctx context.Context, a *Options) error {
	app := a.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	res, err := svc.ApplyJQ(ctx, wire.JQRequest{Key: a.Key, Program: a.Program, Args: a.Args, Touch: a.Touch, IfRevision: a.IfRevision, Actor: cmdutil.Actor(a.Actor)})
	if err != nil {
		return err
	}
	if a.Quiet && !app.JSON {
		return nil
	}
	return app.Render(map[string]any{"key": a.Key, "revision": res.Revision, "value": jsonRaw(res.Value)}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s revision %d\n", a.Key, res.Revision)
		return err
	})
}

type jsonRaw []byte

func (j jsonRaw) MarshalJSON() ([]byte, error) { return j, nil }
