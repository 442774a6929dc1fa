package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/managed"
)

// MaxInput bounds what the hook reads from stdin.
const MaxInput = 16 << 20

// Run is the door of `custodian hook claude` (and of the small
// custodian-hook binary): it reads the hook input from in, finds the
// project roots (dir is -C, "" for none), decides, writes the answer and
// returns the exit status.
func Run(dir string, in io.Reader, out, errw io.Writer) int {
	raw, err := io.ReadAll(io.LimitReader(in, MaxInput))
	if err != nil {
		fmt.Fprintf(errw, "custodian hook: read the hook input: %v\n", err)
		raw = nil
	}
	input, perr := Parse(raw)
	if perr != nil {
		input = nil
	}
	res := Decide(input, raw, FindEnv(dir, input))
	if res.Stderr != "" {
		fmt.Fprintln(errw, res.Stderr)
	}
	if res.Output != nil {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.Output); err != nil {
			fmt.Fprintf(errw, "custodian hook: write the answer: %v\n", err)
			return 1
		}
	}
	return res.Exit
}

// FindEnv finds the project roots a hook call's paths are relative to: the
// project of -C (dir), of the call's cwd and of $CLAUDE_PROJECT_DIR, each
// with its git worktree and main checkout (package projectroot).
func FindEnv(dir string, in *Input) Env {
	env := Env{ProjectDir: os.Getenv("CLAUDE_PROJECT_DIR"), Binary: "custodian"}
	env.Home, _ = os.UserHomeDir()
	var starts []string
	if dir != "" {
		starts = append(starts, dir)
	}
	if in != nil && filepath.IsAbs(in.Cwd) {
		starts = append(starts, in.Cwd)
	}
	if env.ProjectDir != "" {
		starts = append(starts, env.ProjectDir)
	}
	for _, s := range starts {
		r, err := projectroot.Find(s)
		if err != nil {
			continue
		}
		for _, d := range []string{r.Root, r.GitTop, r.MainTop} {
			if d != "" && !slices.Contains(env.Roots, d) {
				env.Roots = append(env.Roots, d)
			}
		}
	}
	for _, r := range env.Roots {
		if real, err := filepath.EvalSymlinks(r); err == nil && !slices.Contains(env.Roots, real) {
			env.Roots = append(env.Roots, real)
		}
	}
	env.Resolve = resolveLinks
	env.Tracked = gitTracksState
	env.ReadPatch = readPatch
	// The rewrite calls custodian on PATH when there is one.
	if _, err := exec.LookPath("custodian"); err != nil {
		if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "custodian" {
			env.Binary = exe
		}
	}
	return env
}

// resolveLinks follows the symbolic links of an absolute path: of the path
// itself when it exists, else of its nearest existing parent (a file about
// to be created in a linked directory).
func resolveLinks(p string) string {
	rest := ""
	for dir := p; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// stateDocuments are the state documents and journals a git checkout of
// another commit would rewind when git tracks them.
var stateDocuments = []string{managed.StateDir, managed.ImplKey, ".impl/journal.ndjson", managed.StateKey,
	".agents/tmp/state.journal.ndjson", managed.CycleDir}

// gitTracksState reports whether git tracks one of the state documents
// under root (asked of git, with a deadline; any failure: true).
func gitTracksState(root string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", root, "ls-files", "-z", "--"}, stateDocuments...)...).Output()
	return err != nil || len(out) > 0
}

// maxPatch bounds what the hook reads of a patch `git apply` names.
const maxPatch = 4 << 20

// readPatch reads a patch file, a regular one only, at most maxPatch
// bytes (a longer one is an error: its content is unknown).
func readPatch(p string) ([]byte, error) {
	// Stat first and open without blocking: a FIFO must not pin the hook.
	if fi, err := os.Stat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPatch {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", p, maxPatch)
	}
	return io.ReadAll(io.LimitReader(f, maxPatch))
}
