package projectroot

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func find(t *testing.T, dir string) Result {
	t.Helper()
	r, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFindOutsideGit(t *testing.T) {
	base := t.TempDir()
	sub := mkdir(t, base, "proj", "a", "b")
	// No marker anywhere: the start directory itself.
	if r := find(t, sub); r.Root != sub || r.Marker != "" {
		t.Errorf("no marker: %+v", r)
	}
	for _, m := range Markers {
		t.Run(m, func(t *testing.T) {
			p := mkdir(t, base, "m-"+filepath.Base(m))
			mkdir(t, p, m)
			deep := mkdir(t, p, "x", "y")
			if r := find(t, deep); r.Root != p || r.Marker != m {
				t.Errorf("from %s: %+v, want root %s", deep, r, p)
			}
		})
	}
	// The nearest marker wins (a nested project stays its own).
	outer := mkdir(t, base, "outer")
	mkdir(t, outer, ".asdd")
	inner := mkdir(t, outer, "vendor", "inner")
	mkdir(t, inner, ".impl")
	if r := find(t, filepath.Join(inner)); r.Root != inner {
		t.Errorf("nested: %+v", r)
	}
	// A relative start works.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(mkdir(t, outer, "src"))
	if r := find(t, "."); r.Root != outer {
		t.Errorf("relative: %+v", r)
	}
}

func TestFindInGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	repo := mkdir(t, base, "repo")
	git(t, repo, "init", "-q", "-b", "main")
	sub := mkdir(t, repo, "src", "pkg")
	// No state yet: the top level, never a nested directory.
	if r := find(t, sub); r.Root != repo || r.GitTop != repo || r.MainTop != "" || r.WorkRoot != repo {
		t.Errorf("fresh repo: %+v", r)
	}
	// A marker above the repository is not this project's.
	mkdir(t, base, ".asdd")
	if r := find(t, sub); r.Root != repo {
		t.Errorf("marker above the repo: %+v", r)
	}
	mkdir(t, repo, ".asdd")
	os.WriteFile(filepath.Join(repo, "README"), []byte("x"), 0o644)
	git(t, repo, "add", "README")
	git(t, repo, "commit", "-qm", "init")

	// Linked worktrees map to the main checkout, at the same relative place.
	wt := filepath.Join(base, "wt-feature")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
	wtSub := mkdir(t, wt, "src", "pkg")
	r := find(t, wtSub)
	if r.Root != repo || r.GitTop != wt || r.MainTop != repo || r.Marker != ".asdd" || r.WorkRoot != wt {
		t.Errorf("worktree: %+v, want root %s", r, repo)
	}
	// A worktree with a relative gitdir path (git worktree add --relative-paths
	// writes one; simulate it).
	wt2 := filepath.Join(base, "nested", "wt2")
	git(t, repo, "worktree", "add", "-q", "-b", "f2", wt2)
	gitFile := filepath.Join(wt2, ".git")
	abs, _ := os.ReadFile(gitFile)
	target := string(abs[len("gitdir: ") : len(abs)-1])
	rel, _ := filepath.Rel(wt2, target)
	os.WriteFile(gitFile, []byte("gitdir: "+rel+"\n"), 0o644)
	if r := find(t, wt2); r.Root != repo {
		t.Errorf("relative gitdir: %+v", r)
	}
	// A submodule's .git file has no commondir: its own project.
	subm := mkdir(t, repo, "third_party", "lib")
	gd := mkdir(t, repo, ".git", "modules", "lib")
	os.WriteFile(filepath.Join(subm, ".git"), []byte("gitdir: "+gd+"\n"), 0o644)
	if r := find(t, subm); r.Root != subm || r.MainTop != "" {
		t.Errorf("submodule: %+v", r)
	}
}
