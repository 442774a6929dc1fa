package impl

import "fmt"

// GitState is what git says about a task's branch.
type GitState string

// The states of a branch.
const (
	// BranchPresent: the branch exists and is not merged into the base.
	BranchPresent GitState = "present"
	// BranchMissing: no such branch.
	BranchMissing GitState = "missing"
	// BranchMerged: the branch exists and its tip is already in the base.
	BranchMerged GitState = "merged"
)

// BranchProbe tells the state of a branch relative to the base branch. Git
// implements it; tests may use a map.
type BranchProbe interface {
	BranchState(branch string) (GitState, error)
}

// StaleTask is a task whose recorded status disagrees with git.
type StaleTask struct {
	ID     string   `json:"id"`
	Status Status   `json:"status"`
	Branch string   `json:"branch"`
	Git    GitState `json:"git"`
	// Plan is set on the entry with id "plan" that --stale adds when the
	// plan document changed since decomposition.
	Plan *PlanChange `json:"plan,omitempty"`
}

// IsStale decides whether a task's status disagrees with its branch: a
// missing branch is stale unless the task is merged or abandoned (cleanup
// deletes branches); a branch already merged into the base is stale unless
// the task says merged.
func IsStale(status Status, g GitState) bool {
	switch g {
	case BranchMissing:
		return !status.Terminal()
	case BranchMerged:
		return status != Merged
	}
	return false
}

// Stale checks every task that records a branch and returns those whose
// status disagrees with git, in manifest order.
func (m *Manifest) Stale(probe BranchProbe) ([]StaleTask, error) {
	out := []StaleTask{}
	for _, t := range m.Tasks {
		if t.Branch == nil || *t.Branch == "" {
			continue
		}
		g, err := probe.BranchState(*t.Branch)
		if err != nil {
			return nil, fmt.Errorf("task %s: branch %s: %w", t.ID, *t.Branch, err)
		}
		if IsStale(t.Status, g) {
			out = append(out, StaleTask{ID: t.ID, Status: t.Status, Branch: *t.Branch, Git: g})
		}
	}
	return out, nil
}
