package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/managed"
	"mvdan.cc/sh/v3/syntax"
)

// git handles the git commands that rewrite the working tree. A rewind of
// a managed file by git (the state going back to an older revision behind
// the custodian's back) is denied:
//
//   - stash (push, save, pop, apply, branch; not list, show, drop, clear),
//     reset --hard/--merge/--keep, and clean (not -n) in the project;
//   - checkout/restore/rm/mv/clean of paths that are managed files or
//     directories holding some (`.` included), and stash push of them;
//   - a move to another commit (checkout/switch REV, merge, pull, rebase,
//     cherry-pick, revert, bisect, am, read-tree -u, checkout-index) when
//     git tracks a state document under the project root (PathEnv.Tracked,
//     unknown: assumed tracked). New branches at HEAD (checkout -b NAME,
//     switch -c NAME) change no file and pass;
//   - apply of a patch that names a managed path (read with
//     PathEnv.ReadPatch, or here in the command).
func (a *analyzer) git(ops []*syntax.Word) {
	dir := a.resolveString(".")
	i := 0
loop:
	for ; i < len(ops); i++ {
		s, ok := a.literal(ops[i])
		if !ok {
			a.unknown("git", ops[i:])
			return
		}
		switch {
		case s == "-C" && i+1 < len(ops):
			i++
			dir = a.resolve(ops[i])
		case s == "-c" && i+1 < len(ops):
			i++
			if v := partial(ops[i]); MightBeManaged(v) || strings.HasPrefix(strings.ToLower(v), "alias.") {
				a.writes = append(a.writes, Write{Op: "git -c", Word: v, Unsure: true})
			}
		case s == "--work-tree" || s == "--git-dir" || s == "--namespace":
			i++
			if s == "--work-tree" && i < len(ops) {
				dir = a.resolve(ops[i])
			}
		case strings.HasPrefix(s, "--work-tree="):
			dir = a.resolveString(strings.TrimPrefix(s, "--work-tree="))
		case strings.HasPrefix(s, "-"):
		default:
			break loop
		}
	}
	if i >= len(ops) {
		return
	}
	if a.srcGitEnv {
		dir = target{unresolved: true} // set where the analyser does not follow
	}
	// Paths are relative to where git runs (-C DIR).
	saved := a.cwds
	defer func() { a.cwds = saved }()
	if dir.unresolved || len(dir.paths) == 0 {
		a.cwds = []string{""}
	} else {
		a.cwds = dir.paths
	}
	sub, _ := a.literal(ops[i])
	g := a.gitArgs(sub, ops[i+1:])
	op := "git " + sub
	switch sub {
	case "stash":
		what := ""
		if len(g.before) > 0 {
			what = g.before[0].word
		}
		switch what {
		case "list", "show", "create", "store", "drop", "clear":
			return
		case "push", "save", "":
			if len(g.after) > 0 {
				for _, t := range g.after {
					a.check(op, t, tree)
				}
				return
			}
		}
		a.rewind(op, dir, "it puts every changed file, and with -u every untracked one, back to another revision", false)
	case "reset":
		if g.flags["--hard"] || g.flags["--merge"] || g.flags["--keep"] {
			a.rewind(op+" --hard", dir, "it puts every tracked file back to a commit's copy", false)
		}
	case "clean":
		if g.flags["-n"] || g.flags["--dry-run"] {
			return
		}
		paths := append(g.before, g.after...)
		if len(paths) == 0 {
			paths = []target{dir}
		}
		for _, t := range paths {
			a.check(op, t, tree)
		}
	case "checkout":
		for _, t := range g.after {
			a.check(op, t, tree)
		}
		if g.dashdash || g.flags["--orphan"] {
			return
		}
		for _, t := range g.before {
			a.check(op, t, tree) // git checkout PATH
		}
		switch {
		case len(g.before) > 0:
			a.rewind(op+" "+g.before[0].word, dir, "it replaces them with another commit's copies", true)
		case g.flags["-f"] || g.flags["--force"]:
			a.rewind(op+" --force", dir, "it puts every changed tracked file back to the commit's copy", true)
		}
	case "switch":
		if len(g.before) > 0 || g.flags["--orphan"] {
			what := "--orphan"
			if len(g.before) > 0 {
				what = g.before[0].word
			}
			a.rewind(op+" "+what, dir, "it replaces them with another commit's copies", true)
		}
	case "restore":
		if (g.flags["--staged"] || g.flags["-S"]) && !g.flags["--worktree"] && !g.flags["-W"] {
			return // the index only
		}
		for _, t := range append(g.before, g.after...) {
			a.check(op, t, tree)
		}
	case "rm":
		if g.flags["--cached"] {
			return
		}
		for _, t := range append(g.before, g.after...) {
			a.check(op, t, tree)
		}
	case "mv":
		a.targetDir = nil
		a.copyLike("mv", append(g.before, g.after...), g.flags)
	case "apply", "am":
		if sub == "apply" && (g.flags["--check"] || g.flags["--stat"] || g.flags["--numstat"] || g.flags["--summary"] || g.flags["--cached"]) && !g.flags["--index"] && !g.flags["--apply"] {
			return
		}
		a.mentions(op, ops[i+1:])
		a.patches(op, append(g.before, g.after...))
		if sub == "am" {
			a.rewind(op, dir, "it commits another history's copies of them", true)
		}
	case "merge", "pull", "rebase", "cherry-pick", "revert", "bisect":
		if sub == "bisect" && len(g.before) > 0 && (g.before[0].word == "log" || g.before[0].word == "visualize" || g.before[0].word == "view") {
			return
		}
		a.rewind(op, dir, "it brings another commit's copies of them into the working tree", true)
	case "read-tree", "checkout-index":
		if sub == "read-tree" && !g.flags["-u"] && !g.flags["--reset"] {
			return
		}
		a.rewind(op, dir, "it writes the index's copies of them into the working tree", sub == "read-tree")
	case "status", "add", "commit", "log", "diff", "show", "branch", "tag", "fetch", "push", "remote", "config",
		"rev-parse", "ls-files", "ls-tree", "blame", "grep", "describe", "shortlog", "reflog", "cat-file", "rev-list",
		"notes", "help", "version", "gc", "fsck", "count-objects", "show-ref", "symbolic-ref", "var", "whatchanged",
		"range-diff", "name-rev", "merge-base", "for-each-ref", "format-patch", "archive", "worktree", "init", "clone",
		"difftool", "log-tree", "diff-tree", "diff-files", "diff-index", "check-ignore", "check-attr", "hash-object", "write-tree",
		"commit-tree", "update-ref", "submodule", "lfs", "annotate", "citool", "gui", "instaweb", "maintenance", "prune", "repack":
		// Their writes are the repository's, or the paths of -o/--output.
		for _, f := range []string{"--output", "-o"} {
			if v, ok := flagValue(a, ops[i+1:], f, f); ok && (f == "--output" || sub == "format-patch" || sub == "archive") {
				a.check(op+" "+f, v, tree)
			}
		}
		if sub == "clone" || sub == "worktree" || sub == "init" {
			for _, t := range append(g.before, g.after...) {
				a.check(op, t, named)
			}
		}
	default: // an alias or a command unknown here
		a.unknown(op, ops[i+1:])
	}
}

// gitArgs splits a git subcommand's arguments: the words before `--`
// (options and their values left out), those after, and the options.
type gitSplit struct {
	before, after []target
	dashdash      bool
	flags         map[string]bool
}

// gitOptsWithValue lists, per subcommand, its short options that take a
// value (their value is no path).
var gitOptsWithValue = map[string]string{"checkout": "bB", "switch": "cC", "restore": "s", "stash": "m", "clean": "e",
	"apply": "", "commit": "mcCF", "merge": "msX", "cherry-pick": "mX", "revert": "m", "rebase": "sX", "pull": "sX"}

func (a *analyzer) gitArgs(sub string, ops []*syntax.Word) gitSplit {
	g := gitSplit{flags: map[string]bool{}}
	withValue := gitOptsWithValue[sub]
	for i := 0; i < len(ops); i++ {
		s, ok := a.literal(ops[i])
		if g.dashdash {
			g.after = append(g.after, a.resolve(ops[i]))
			continue
		}
		switch {
		case ok && s == "--":
			g.dashdash = true
		case ok && strings.HasPrefix(s, "--"):
			k, _, hasValue := strings.Cut(s, "=")
			g.flags[k] = true
			switch k {
			case "--source", "--message", "--orphan", "--create", "--force-create", "--strategy", "--strategy-option", "--pathspec-from-file":
				if !hasValue {
					i++
				}
			}
		case ok && strings.HasPrefix(s, "-") && s != "-":
			for j, r := range s[1:] {
				g.flags["-"+string(r)] = true
				if strings.ContainsRune(withValue, r) {
					if j == len(s)-2 {
						i++
					}
					break
				}
			}
		default:
			g.before = append(g.before, a.resolve(ops[i]))
		}
	}
	return g
}

// rewind records a git command that rewrites the project's working tree
// (dir is where git runs): always, or with ifTracked only when git tracks
// a state document there.
func (a *analyzer) rewind(op string, dir target, why string, ifTracked bool) {
	root, ok := a.projectOf(dir)
	if !ok {
		return
	}
	if ifTracked && root != "" && a.env.Tracked != nil && !a.env.Tracked(root) {
		return
	}
	a.writes = append(a.writes, Write{Op: op + ": " + why, Rel: "the managed files in the working tree"})
}

// projectOf finds the project root dir lies in ("" and true when dir is
// not known: it may be one).
func (a *analyzer) projectOf(dir target) (string, bool) {
	if len(dir.paths) == 0 {
		return "", dir.unresolved || dir.word == ""
	}
	for _, p := range dir.paths {
		for _, root := range a.env.Roots {
			if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return root, true
			}
		}
	}
	return "", false
}

// patches denies a git apply/am (or a patch) of a patch that names a managed path: the
// patch files are read with PathEnv.ReadPatch; a patch from stdin is the
// command's here-document (or unknown).
func (a *analyzer) patches(op string, files []target) {
	if len(files) == 0 && a.stdinFile != nil {
		files = []target{*a.stdinFile}
	}
	if len(files) == 0 {
		a.fromStdin(op)
		return
	}
	for _, t := range files {
		if t.unresolved || len(t.paths) == 0 || a.env.ReadPatch == nil {
			if a.srcManaged {
				a.writes = append(a.writes, Write{Op: op, Word: t.word, Unsure: true, Why: "the patch could not be read"})
			}
			continue
		}
		b, err := a.env.ReadPatch(t.paths[0])
		if errors.Is(err, fs.ErrNotExist) {
			continue // git cannot read it either
		}
		if err != nil {
			a.writes = append(a.writes, Write{Op: op, Word: t.word, Unsure: true, Why: "the patch could not be read: " + err.Error()})
			continue
		}
		a.tick(len(b) / 64)
		if MightBeManaged(string(b)) {
			a.writes = append(a.writes, Write{Op: fmt.Sprintf("%s %s: the patch changes a managed file", op, t.word), Rel: "the managed files it names", Kind: ASDD})
		}
	}
}

// humanCommands are the custodian commands that are a human's decision
// (app.HumanDecision and the other commands that settle or set up state):
// an agent may not run them.
var humanCommands = map[string]bool{"approve": true, "resolve": true, "review": true, "rollback": true,
	"init": true, "repair": true, "rebuild": true, "migrate": true}

// custodian handles the custodian's own commands: every agent operation
// passes (the custodian checks it); a human decision is denied.
func (a *analyzer) custodian(ops []*syntax.Word) {
	var words []string
	help, key := false, ""
	for i := 0; i < len(ops); i++ {
		s, ok := a.literal(ops[i])
		if !ok {
			if len(words) == 0 {
				a.human = append(a.human, "custodian "+partial(ops[i])+" (a command known only when it runs)")
				return
			}
			continue
		}
		switch {
		case s == "-h" || s == "--help":
			help = true
		case len(words) == 0 && (s == "-C" || s == "--dir" || s == "--server" || s == "--store"):
			i++
		case strings.HasPrefix(s, "-"):
			if strings.HasPrefix(s, "--force") {
				words = append(words, "--force")
			}
			if v, ok := strings.CutPrefix(s, "--key="); ok {
				key = v
			} else if s == "--key" && i+1 < len(ops) {
				key, _ = a.literal(ops[i+1])
			}
		default:
			words = append(words, s)
		}
	}
	if help || len(words) == 0 {
		return
	}
	switch sub := words[0]; {
	case humanCommands[sub]:
		a.human = append(a.human, "custodian "+sub)
	case sub == "assumption" && len(words) > 1 && words[1] == "correct":
		a.human = append(a.human, "custodian assumption correct")
	case sub == "unlock" && slices.Contains(words, "--force"):
		a.human = append(a.human, "custodian unlock --force")
	case sub == "hook" && len(words) > 1 && (words[1] == "install" || words[1] == "uninstall"):
		a.human = append(a.human, "custodian hook "+words[1])
	case sub == "apply" && key != "" && !managed.IsDocument(path.Clean(key)):
		// apply changes the custodian's documents, not its other files
		// (the configuration, the settings, a journal).
		if k := Classify(path.Clean(key)); k != NotManaged {
			a.writes = append(a.writes, Write{Op: "custodian apply --key", Word: key, Rel: path.Clean(key), Kind: k})
		}
	}
}
