package impl

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// Git answers BranchState by running git in a repository. This file is the
// package's only I/O. Git asks git three questions the first time it is
// used (is the base a commit, which local branches exist, which of them are
// merged into the base) and answers every branch from those, so checking a
// thousand tasks costs three git processes, not three thousand.
type Git struct {
	// Dir is the repository (any directory inside its work tree).
	Dir string
	// Base is the branch tasks are merged into; "" means HEAD.
	Base string

	once     sync.Once
	branches map[string]bool // local branch name -> merged into base
	err      error
}

// BranchState reports whether refs/heads/<branch> exists and, if it does,
// whether its tip is already contained in the base.
func (g *Git) BranchState(branch string) (GitState, error) {
	g.once.Do(g.load)
	if g.err != nil {
		return "", g.err
	}
	merged, ok := g.branches[branch]
	switch {
	case !ok:
		return BranchMissing, nil
	case merged:
		return BranchMerged, nil
	}
	return BranchPresent, nil
}

func (g *Git) load() {
	base := g.Base
	if base == "" {
		base = "HEAD"
	}
	rev, code, err := g.run("rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil {
		g.err = err
		return
	}
	if code != 0 || rev == "" {
		g.err = fmt.Errorf("base %q is not a commit of the repository", base)
		return
	}
	all, err := g.refs("for-each-ref", "--format=%(refname)", "refs/heads/")
	if err != nil {
		g.err = err
		return
	}
	merged, err := g.refs("for-each-ref", "--format=%(refname)", "--merged="+rev, "refs/heads/")
	if err != nil {
		g.err = err
		return
	}
	g.branches = make(map[string]bool, len(all))
	for _, b := range all {
		g.branches[b] = false
	}
	for _, b := range merged {
		g.branches[b] = true
	}
}

// refs runs a git command listing full ref names, one per line, and returns
// the branch names.
func (g *Git) refs(args ...string) ([]string, error) {
	out, code, err := g.run(args...)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("git %s exited %d", strings.Join(args, " "), code)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "refs/heads/"); ok {
			names = append(names, name)
		}
	}
	return names, nil
}

// run runs git and returns its trimmed stdout and exit code; err is set only
// when git could not run at all, died of a signal, or exited 128 (fatal).
func (g *Git) run(args ...string) (string, int, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = g.Dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 && ee.ExitCode() != 128 {
		return strings.TrimSpace(out.String()), ee.ExitCode(), nil
	}
	if err != nil {
		return "", -1, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), 0, nil
}
