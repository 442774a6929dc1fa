package cli

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// TestRootCommandNames holds rootCommands' names to the commands they make:
// a process finds the command it runs by that name (newRootFor).
func TestRootCommandNames(t *testing.T) {
	app := &cmdutil.App{}
	var names []string
	for _, c := range rootCommands() {
		if got := c.new(app).Name(); got != c.name {
			t.Errorf("rootCommands: %q makes the command %q", c.name, got)
		}
		names = append(names, c.name)
	}
	var all []string
	for _, c := range NewRoot(&cmdutil.App{}).Commands() {
		if n := c.Name(); n != "version" && n != "help" && n != "completion" {
			all = append(all, n)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, all) {
		t.Errorf("root's commands %q, rootCommands %q", all, names)
	}
}

// TestRootForOneCommand: a process that runs a command builds that one.
func TestRootForOneCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // the root's commands; nil: all of them
	}{
		{[]string{"-C", "x", "--json", "heartbeat", "--agent", "spec"}, []string{"completion", "heartbeat", "help", "version"}},
		{[]string{"impl", "--update-status", "--task-id", "1.1", "--status", "pending"}, []string{"completion", "help", "impl", "version"}},
		{[]string{"status", "--json"}, []string{"completion", "help", "status", "version"}},
		{[]string{"version"}, []string{"completion", "help", "version"}},
		{[]string{"--store", "status", "heartbeat", "--agent", "spec"}, []string{"completion", "heartbeat", "help", "version"}},
		{[]string{"help", "status"}, nil},
		{[]string{"statsu"}, nil},
		{[]string{"--bogus", "status"}, nil},
	} {
		var got []string
		for _, c := range newRootFor(&cmdutil.App{}, tc.args).Commands() {
			got = append(got, c.Name())
		}
		want := tc.want
		if want == nil {
			want = nil
			for _, c := range NewRoot(&cmdutil.App{}).Commands() {
				want = append(want, c.Name())
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("custodian %q: root with %q, want %q", tc.args, got, want)
		}
	}
}

// TestRootForArgsActsAsTheWholeTree runs arguments through the root a
// process builds for them (one command, or the whole tree) and through the
// whole tree: the same output, the same error.
func TestRootForArgsActsAsTheWholeTree(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"heartbeat", "--help"},
		{"-C", dir, "heartbeat", "--help"},
		{"--dir=" + dir, "--json", "cycle", "--help"},
		{"cycle"},
		{"cycle", "shw"},
		{"slice", "list", "--bogus"},
		{"version"},
		{"--json", "version"},
		{"-C", "version", "schema"},
		{"schema", "version"},
		{"--version"},
		{"help", "heartbeat"},
		{"heartbeats"},
		{"completion", "bash"},
		{"__complete", "heart"},
		{"tasks", "add", "--help"},
		{"impl", "--help"},
		{"bench", "daemon", "--help"},
		{},
	} {
		run := func(lazy bool) string {
			var out bytes.Buffer
			app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &out, Now: func() time.Time { return time.Unix(0, 0) }, Openers: StoreOpeners()}
			root := NewRoot(app)
			if lazy {
				root = newRootFor(app, args)
			}
			root.SetArgs(args)
			_, err := root.ExecuteC()
			return fmt.Sprintf("%s\nerror: %v", out.String(), err)
		}
		if lazy, whole := run(true), run(false); lazy != whole {
			t.Errorf("custodian %q: the root for the arguments gives\n%s\nthe whole tree\n%s", args, lazy, whole)
		}
	}
}
