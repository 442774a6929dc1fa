package projectroot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/reason"
)

// WitnessDir keeps a git project's witnesses in its common git directory
// and another's in the user's state directory, and refuses a directory
// inside the project.
func TestWitnessDir(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(projectroot.WitnessEnv, "")
	os.Unsetenv(projectroot.WitnessEnv)
	if got, err := projectroot.WitnessDir(repo); err != nil || got != filepath.Join(repo, ".git", "custodian") {
		t.Errorf("git project: %q %v", got, err)
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	plain := t.TempDir()
	if got, err := projectroot.WitnessDir(plain); err != nil || !strings.HasPrefix(got, filepath.Join(state, "custodian", "projects")+string(filepath.Separator)) {
		t.Errorf("project outside git: %q %v", got, err)
	}
	t.Setenv(projectroot.WitnessEnv, "off")
	if got, err := projectroot.WitnessDir(plain); err != nil || got != "" {
		t.Errorf("off: %q %v", got, err)
	}
	t.Setenv(projectroot.WitnessEnv, filepath.Join(plain, "w"))
	if _, err := projectroot.WitnessDir(plain); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("inside the project: %v, want INVALID_INPUT", err)
	}
}
