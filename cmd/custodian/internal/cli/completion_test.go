package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Shell completion: scripts for bash, zsh and fish, and dynamic
// completion of command names.
func TestCompletion(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, Now: time.Now}
		if code := Run(app, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	for shell, marker := range map[string]string{"bash": "complete -o default -F __start_custodian custodian", "zsh": "#compdef custodian", "fish": "complete -c custodian"} {
		if got := run("completion", shell); !strings.Contains(got, marker) {
			t.Errorf("completion %s lacks %q", shell, marker)
		}
	}
	got := run("__complete", "sta")
	for _, want := range []string{"status", "state"} {
		if !strings.Contains(got, want+"\t") && !strings.Contains(got, want+"\n") {
			t.Errorf("completing \"sta\" does not offer %s:\n%s", want, got)
		}
	}
	if strings.Contains(run("__complete", "do"), "docs") {
		t.Error("the hidden docs command is offered")
	}
}
