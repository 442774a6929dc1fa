package board_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Without chromium the browser tests skip, saying why, on a developer's
// machine, and fail in CI ($CI set): the test binary is run again with a
// PATH on which there is no chromium.
func TestBrowserTestsNeedChromiumInCI(t *testing.T) {
	if os.Getenv("BOARD_CHROMIUM_CHILD") != "" {
		t.Skip("the child run")
	}
	empty := t.TempDir()
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestDashboardLayout$", "-test.v", "-test.count=1")
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "CI=") {
				env = append(env, kv)
			}
		}
		env = append(env, "PATH="+empty, "BOARD_CHROMIUM_CHILD=1")
		if ci != "" {
			env = append(env, "CI="+ci)
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "--- SKIP: TestDashboardLayout") || !strings.Contains(out, "chromium is not installed") {
		t.Errorf("without chromium, outside CI: %v\n%s", err, out)
	}
	out, err = run("true")
	if err == nil || !strings.Contains(out, "--- FAIL: TestDashboardLayout") || !strings.Contains(out, "$CI is set") {
		t.Errorf("without chromium, in CI: %v\n%s", err, out)
	}
}
