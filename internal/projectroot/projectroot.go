// Package projectroot finds the project a command works on, as git finds
// its repository: from any subdirectory, and from any linked worktree of
// the repository (DESIGN.md §8, "one state per repository").
//
// The rule, from a start directory S:
//
//  1. Find the enclosing git work tree (the nearest ancestor of S holding a
//     .git entry). When it is a linked worktree (.git is a file naming a
//     git dir that has a commondir file), S is mapped to the same relative
//     place in the main checkout, the directory holding the common .git.
//     This is read from the files: no git process is spawned.
//  2. Walk up from (the mapped) S to the nearest directory holding a state
//     marker: .asdd, .impl, .agents/tmp or .workflow/.cycle. Inside a git
//     repository the walk stops at its top level; outside one it stops
//     below $HOME and the file system root (neither is a project root).
//  3. Without a marker, the project root is the git top level (so a first
//     `custodian init` in a subdirectory never creates a nested .asdd), or,
//     outside git, S itself.
package projectroot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Markers are the entries whose presence makes a directory a project root.
var Markers = []string{".asdd", ".impl", ".agents/tmp", ".workflow/.cycle"}

// Result says where the project is and how it was found.
type Result struct {
	// Root is the absolute project root.
	Root string
	// GitTop is the git work tree that held the start directory ("" when
	// outside git); for a linked worktree, the worktree's top.
	GitTop string
	// MainTop is the main checkout when GitTop is a linked worktree.
	MainTop string
	// Marker is the marker found at Root ("" when none was).
	Marker string
	// WorkRoot is Root as seen from the start directory's own work tree:
	// for a linked worktree, the same place inside the worktree (where
	// Claude Code's project settings and the checked-out files are); else
	// Root.
	WorkRoot string
}

// Find returns the project root for start (made absolute).
func Find(start string) (res Result, err error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return Result{}, err
	}
	top, gitEntry := gitTop(abs)
	ceiling := ""
	from := abs
	if top != "" {
		res.GitTop = top
		ceiling = top
		if main := mainCheckout(top, gitEntry); main != "" {
			res.MainTop = main
			rel, _ := filepath.Rel(top, abs)
			from = filepath.Join(main, rel)
			ceiling = main
		}
	}
	defer func() {
		res.WorkRoot = res.Root
		if res.MainTop != "" {
			if rel, err := filepath.Rel(res.MainTop, res.Root); err == nil && !strings.HasPrefix(rel, "..") {
				res.WorkRoot = filepath.Join(res.GitTop, rel)
			}
		}
	}()
	home, _ := os.UserHomeDir()
	for dir := from; ; {
		if ceiling == "" && (dir == home || dir == filepath.Dir(dir)) {
			break
		}
		for _, m := range Markers {
			if fi, err := os.Stat(filepath.Join(dir, m)); err == nil && fi.IsDir() {
				res.Root, res.Marker = dir, m
				return res, nil
			}
		}
		if dir == ceiling {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	switch {
	case res.MainTop != "":
		res.Root = res.MainTop
	case top != "":
		res.Root = top
	default:
		res.Root = abs
	}
	return res, nil
}

// gitTop returns the nearest ancestor of dir holding a .git entry, and that
// entry's path.
func gitTop(dir string) (string, string) {
	for {
		p := filepath.Join(dir, ".git")
		if _, err := os.Lstat(p); err == nil {
			return dir, p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// mainCheckout returns the main checkout of a linked worktree whose .git
// entry is gitEntry, or "" when top is not a linked worktree (a main
// checkout, a submodule, a bare common dir).
func mainCheckout(top, gitEntry string) string {
	fi, err := os.Lstat(gitEntry)
	if err != nil || fi.IsDir() {
		return ""
	}
	common, linked := commonDir(top, gitEntry)
	if !linked || filepath.Base(common) != ".git" {
		return "" // a submodule, or a bare repository: no main checkout
	}
	main := filepath.Dir(common)
	if fi, err := os.Stat(main); err != nil || !fi.IsDir() {
		return ""
	}
	return main
}

// CommonDir returns the common git directory of the work tree whose top
// level is top ("" when top holds no .git entry): .git itself, or, where
// .git is a file (a linked worktree, a submodule), the git directory it
// names, or that one's commondir when it has one. Read from the files: no
// git process is spawned.
func CommonDir(top string) string {
	entry := filepath.Join(top, ".git")
	fi, err := os.Lstat(entry)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return entry
	}
	common, _ := commonDir(top, entry)
	return common
}

// commonDir reads a .git file (gitEntry) of the work tree top: the git
// directory it names, or that directory's commondir, and whether it had
// one (a linked worktree's git dir does; a submodule's does not).
func commonDir(top, gitEntry string) (string, bool) {
	b, err := os.ReadFile(gitEntry)
	if err != nil {
		return "", false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(top, gitdir)
	}
	cd, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return filepath.Clean(gitdir), false
	}
	common := strings.TrimSpace(string(cd))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	return filepath.Clean(common), true
}
