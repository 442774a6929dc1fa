package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/custodian-dev/custodian/asdd"
)

// gitRepo reports whether root is inside a git work tree.
func gitRepo(ctx context.Context, root string) bool {
	out, err := gitOut(ctx, root, nil, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(out) == "true"
}

func gitOut(ctx context.Context, root string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// CommitToBranch commits the work tree of the git repository at root, as
// it is now, to a new branch (seed 004: implementation below its minimum →
// "commit to feature branch"), without touching the work tree, the index
// or the checked-out branch: the commit is built in a private index on
// top of HEAD. It returns the commit's hash. An existing branch of that
// name is never moved.
func CommitToBranch(ctx context.Context, root, branch, message string) (string, error) {
	if !asdd.ValidBranch(branch) {
		return "", fmt.Errorf("branch name %q is not valid", branch)
	}
	if _, err := gitOut(ctx, root, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		return "", fmt.Errorf("branch %s already exists", branch)
	}
	dir, err := os.MkdirTemp("", "custodian-branch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
	head, herr := gitOut(ctx, root, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	head = strings.TrimSpace(head)
	if herr == nil {
		if _, err := gitOut(ctx, root, env, "read-tree", head); err != nil {
			return "", err
		}
	}
	// Everything but the runner's and the custodian's own files.
	if _, err := gitOut(ctx, root, env, "add", "-A", "--", ".", ":(exclude)"+RunDir, ":(exclude).asdd/state"); err != nil {
		return "", err
	}
	tree, err := gitOut(ctx, root, env, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-m", message}
	if herr == nil {
		args = append(args, "-p", head)
	}
	// An identity for the commit when the repository has none configured.
	idEnv := []string{}
	if _, err := gitOut(ctx, root, nil, "config", "user.email"); err != nil {
		idEnv = append(idEnv, "GIT_AUTHOR_NAME=custodian", "GIT_AUTHOR_EMAIL=custodian@localhost",
			"GIT_COMMITTER_NAME=custodian", "GIT_COMMITTER_EMAIL=custodian@localhost")
	}
	commit, err := gitOut(ctx, root, idEnv, args...)
	if err != nil {
		return "", err
	}
	commit = strings.TrimSpace(commit)
	// The empty old value makes update-ref refuse a branch created since.
	if _, err := gitOut(ctx, root, nil, "update-ref", "refs/heads/"+branch, commit, ""); err != nil {
		return "", err
	}
	return commit, nil
}

// featureBranch commits a halted agent's work to its feature branch and
// records the branch in the block record, when the agent's below_action
// asks for it and the project is a git repository.
func (r *Runner) featureBranch(ctx context.Context, id string, ag *asdd.Agent, out *asdd.Outcome) {
	if out == nil || out.Verdict == nil || ag.BelowAction != asdd.BelowFeatureBranch {
		return
	}
	m, err := r.o.State.Manifest(ctx)
	if err != nil {
		return
	}
	s := m.Slice(id)
	if s == nil || s.Status != asdd.Blocked || s.HaltedAgent != ag.Name || s.FailureMode != asdd.ModeBelowMinimum || s.FeatureBranch != "" {
		return
	}
	if !gitRepo(ctx, r.o.Root) {
		r.emit(Event{Kind: EvProposed, Slice: id, Agent: ag.Name, Detail: "not a git repository: the agent's work stays in the work tree for review"})
		return
	}
	attempt := 1
	for _, e := range s.ConfidenceChain {
		if e.Agent == ag.Name {
			attempt = e.Attempt
		}
	}
	branch := asdd.FeatureBranchName(id, ag.Name, attempt)
	msg := fmt.Sprintf("%s: the %s agent's work, halted below its minimum (%s)\n\n%s\nEscalation: %s\n", id, ag.Name, s.BlockReason, s.ReviewRequired, s.EscalationID)
	commit, err := CommitToBranch(ctx, r.o.Root, branch, msg)
	if err != nil {
		r.emit(Event{Kind: EvRejected, Slice: id, Agent: ag.Name, Detail: "feature branch: " + err.Error()})
		return
	}
	if _, err := r.o.State.Apply(ctx, asdd.AttachBranch{Slice: id, Agent: ag.Name, Branch: branch, Commit: commit}, nil); err != nil && !errors.Is(err, context.Canceled) {
		r.emit(Event{Kind: EvRejected, Slice: id, Agent: ag.Name, Detail: "feature branch " + branch + ": " + err.Error()})
		return
	}
	r.emit(Event{Kind: EvProposed, Slice: id, Agent: ag.Name, Detail: fmt.Sprintf("work committed to feature branch %s (%s) for human code review", branch, commit[:min(12, len(commit))])})
}
