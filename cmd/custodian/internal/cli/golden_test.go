package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/google/go-cmp/cmp"
)

// update is the package's one -update flag: go test ./internal/cli -update
// rewrites the golden files under testdata/.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// updating reports whether golden files are being rewritten.
func updating() bool { return *update }

// checkGolden compares got with the golden file at path (under testdata/),
// or rewrites it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}

// runCLI runs one custodian command line in-process against project dir
// with the clock fixed at now, exactly as the binary's main does (Run), and
// returns what it printed and its exit code.
func runCLI(dir, stdin string, now time.Time, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	app := &cmdutil.App{In: strings.NewReader(stdin), Out: &out, Err: &errb, Now: func() time.Time { return now }}
	code = Run(app, append([]string{"-C", dir}, args...))
	return out.String(), errb.String(), code
}
