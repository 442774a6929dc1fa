package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// pathDir is put first on PATH: the directory of the custodian binary, so
// that both binaries rewrite task-manifest.sh to `custodian impl`.
var pathDir string

func run(t *testing.T, bin string, stdin []byte, args ...string) (string, string, int, time.Duration) {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Stdin = bytes.NewReader(stdin)
	c.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR=/proj", "PATH="+pathDir+":/usr/bin:/bin")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	t0 := time.Now()
	err := c.Run()
	d := time.Since(t0)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code, d
}

// TestSameAnswers: the small binary and `custodian hook claude` answer
// every fixture with the same bytes and exit code, as processes. It logs
// the latency of an unrelated call through each.
func TestSameAnswers(t *testing.T) {
	full := testbin.Path(t)
	pathDir = filepath.Dir(full)
	small := filepath.Join(t.TempDir(), "custodian-hook")
	if err := testbin.Build(".", small); err != nil {
		t.Fatalf("build: %v", err)
	}
	files, _ := filepath.Glob("../../hook/claude/testdata/hook/*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var fx struct {
			Input json.RawMessage `json:"input"`
		}
		json.Unmarshal(b, &fx)
		o1, e1, c1, _ := run(t, full, fx.Input, "hook", "claude")
		o2, e2, c2, _ := run(t, small, fx.Input, "hook", "claude")
		if o1 != o2 || c1 != c2 || e1 != e2 {
			t.Errorf("%s: custodian hook claude: %d %q %q; custodian-hook: %d %q %q", filepath.Base(f), c1, o1, e1, c2, o2, e2)
		}
	}
	// Both are refused garbage arguments the same way custodian would be.
	if _, _, code, _ := run(t, small, nil, "--bogus"); code != 2 {
		t.Errorf("unknown argument: exit %d", code)
	}

	unrelated := []byte(`{"session_id":"s","cwd":"` + t.TempDir() + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./... 2>&1 | tail -5"}}`)
	for _, bin := range []string{small, full} {
		var ds []time.Duration
		for range 60 {
			out, _, code, d := run(t, bin, unrelated, "hook", "claude")
			if code != 0 || out != "" {
				t.Fatalf("%s: unrelated call answered %d %q", bin, code, out)
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		t.Logf("%s hook claude, unrelated call, 60 runs: p50 %v p90 %v max %v", filepath.Base(bin), ds[30], ds[54], ds[59])
	}
}
