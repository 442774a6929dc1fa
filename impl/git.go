package impl

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Git answers BranchState by running git in a repository. This file is the
// package's only I/O.
type Git struct {
	// Dir is the repository (any directory inside its work tree).
	Dir string
	// Base is the branch tasks are merged into; "" means HEAD.
	Base string
}

// BranchState reports whether refs/heads/<branch> exists and, if it does,
// whether its tip is already contained in the base.
func (g Git) BranchState(branch string) (GitState, error) {
	base := g.Base
	if base == "" {
		base = "HEAD"
	}
	baseRev, code, err := g.run("rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("base %q is not a commit of the repository", base)
	}
	tip, code, err := g.run("rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return "", err
	}
	if code != 0 {
		return BranchMissing, nil
	}
	_, code, err = g.run("merge-base", "--is-ancestor", tip, baseRev)
	if err != nil {
		return "", err
	}
	switch code {
	case 0:
		return BranchMerged, nil
	case 1:
		return BranchPresent, nil
	}
	return "", fmt.Errorf("git merge-base --is-ancestor exited %d", code)
}

// run runs git and returns its trimmed stdout and exit code; err is set only
// when git could not run at all or died of a signal, or exited 128 (fatal).
func (g Git) run(args ...string) (string, int, error) {
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
