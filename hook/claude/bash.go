package claude

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// PathEnv is what a path in a command is resolved against.
type PathEnv struct {
	Cwd        string              // the command's working directory (absolute; "" unknown)
	Home       string              // for ~
	ProjectDir string              // $CLAUDE_PROJECT_DIR
	Roots      []string            // absolute project roots managed paths are relative to
	Resolve    func(string) string // follows symbolic links (Env.Resolve); nil: none
}

// Write is one write of a managed file that a command would do.
type Write struct {
	Op     string // what writes: ">", "tee", "rm", "sed -i", …
	Word   string // the path as written
	Rel    string // relative to its project root ("" when not resolved)
	Kind   Kind
	Unsure bool // the path or the command could not be resolved: denied to be safe
}

func (w Write) String() string {
	target := w.Rel
	if target == "" {
		target = w.Word
	}
	if w.Unsure {
		return fmt.Sprintf("%s (%s: cannot tell whether it writes there)", target, w.Op)
	}
	return fmt.Sprintf("%s (%s)", target, w.Op)
}

// Bash is the analysis of one Bash command.
type Bash struct {
	Writes []Write
	// Rewritten is the command with every task-manifest.sh call replaced by
	// `custodian impl` with the same arguments; "" when there is none.
	Rewritten string
}

// AnalyzeBash parses a Bash command and lists the writes of managed files
// it would do. binary is the custodian command the rewrite calls. A command
// that does not parse is an error: the caller decides with MightBeManaged.
func AnalyzeBash(cmd string, env PathEnv, binary string) (Bash, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return Bash{}, fmt.Errorf("parse the command: %w", err)
	}
	a := &analyzer{env: env, cwds: []string{env.Cwd}, vars: map[string]string{}, globs: map[string]bool{}, binary: binary}
	if env.ProjectDir != "" {
		a.vars["CLAUDE_PROJECT_DIR"] = env.ProjectDir
	}
	if env.Home != "" {
		a.vars["HOME"] = env.Home
	}
	a.src = cmd
	a.walk(f, 0)
	res := Bash{Writes: a.writes}
	if a.rewrote {
		var sb strings.Builder
		if err := syntax.NewPrinter(syntax.Minify(false)).Print(&sb, f); err != nil {
			return Bash{}, fmt.Errorf("print the rewritten command: %w", err)
		}
		res.Rewritten = strings.TrimRight(sb.String(), "\n")
	}
	return res, nil
}

type analyzer struct {
	env     PathEnv
	cwds    []string // every directory the command may be in at this point ("" unknown)
	vars    map[string]string
	writes  []Write
	binary  string
	rewrote bool
	// globs are variables holding a pattern (for f in PATTERN).
	globs     map[string]bool
	targetDir *target // cp/mv -t DIR
	src       string  // the source being walked (for comment positions)
	lenient   bool    // checking an unknown command's operands (not a known write)
}

const maxDepth = 4 // bash -c inside bash -c …

func (a *analyzer) walk(node syntax.Node, depth int) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Comment:
			// The parser may take a '#' that bash reads as part of a word
			// (after a closing quote) for a comment: what follows is then
			// hidden from the walk. Such a "comment" naming a managed file
			// cannot be decided.
			if off := int(n.Hash.Offset()); off > 0 && off <= len(a.src) && !strings.ContainsRune(" \t\n;&|()", rune(a.src[off-1])) && MightBeManaged(n.Text) {
				a.writes = append(a.writes, Write{Op: "#", Word: n.Text, Unsure: true})
			}
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				a.redirect(r)
			}
		case *syntax.ForClause:
			if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil {
				a.loop(wi)
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				a.assign(as)
			}
		case *syntax.CallExpr:
			for _, as := range n.Assigns {
				a.assign(as)
			}
			if len(n.Args) > 0 {
				a.call(n, depth)
			}
		}
		return true
	})
}

func (a *analyzer) assign(as *syntax.Assign) {
	if as.Name == nil {
		return
	}
	delete(a.globs, as.Name.Value)
	if as.Value == nil || as.Array != nil || as.Index != nil {
		delete(a.vars, as.Name.Value)
		return
	}
	if v, ok := a.literal(as.Value); ok {
		if as.Append {
			v = a.vars[as.Name.Value] + v
		}
		a.vars[as.Name.Value] = v
	} else {
		delete(a.vars, as.Name.Value)
	}
}

// loop gives a for loop's variable its items: when one is a pattern, the
// variable is a pattern; when one is unknown, the variable is unknown.
func (a *analyzer) loop(wi *syntax.WordIter) {
	name := wi.Name.Value
	delete(a.vars, name)
	delete(a.globs, name)
	var vals []string
	glob := false
	for _, w := range wi.Items {
		v, ok := a.literal(w)
		if !ok {
			return
		}
		vals = append(vals, v)
		glob = glob || hasGlob(w)
	}
	if len(vals) == 0 {
		return
	}
	// Fail closed: the variable takes the item that names the most
	// (a managed path or pattern if there is one).
	best := vals[0]
	for _, v := range vals {
		if MightBeManaged(v) {
			best = v
			break
		}
	}
	a.vars[name] = best
	a.globs[name] = glob
}

// literal expands a word with the known variables; ok is false when it
// holds anything else (an unknown variable, a command substitution).
func (a *analyzer) literal(w *syntax.Word) (s string, ok bool) {
	defer func() {
		if recover() != nil { // the expander on a node it does not expect
			s, ok = "", false
		}
	}()
	// Fields, not Literal: it does the quote removal of escaped characters
	// (\' stays \' with Literal); with no ReadDir it does not glob.
	cfg := &expand.Config{Env: envOf(a.vars), NoUnset: true, ProcSubst: errProcSubst}
	fields, err := expand.Fields(cfg, w)
	if err != nil {
		return "", false
	}
	return strings.Join(fields, " "), true
}

var errUnknown = errors.New("not a literal")

func errProcSubst(*syntax.ProcSubst) (string, error) { return "", errUnknown }

// partial is the word's literal text with unknown parts left out, for
// MightBeManaged.
func partial(w *syntax.Word) string {
	var sb strings.Builder
	var parts func([]syntax.WordPart)
	parts = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				sb.WriteString(p.Value)
			case *syntax.SglQuoted:
				sb.WriteString(p.Value)
			case *syntax.DblQuoted:
				parts(p.Parts)
			}
		}
	}
	parts(w.Parts)
	return sb.String()
}

func (a *analyzer) usesGlobVar(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && a.globs[p.Param.Value] {
			found = true
		}
		return !found
	})
	return found
}

func hasGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
			return true
		}
	}
	return false
}

type envMap map[string]string

func envOf(m map[string]string) expand.Environ { return envMap(m) }

func (e envMap) Get(name string) expand.Variable {
	if v, ok := e[name]; ok {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
	}
	return expand.Variable{}
}

func (e envMap) Each(fn func(string, expand.Variable) bool) {
	for k := range e {
		if !fn(k, e.Get(k)) {
			return
		}
	}
}

// target is one path a command names, resolved.
type target struct {
	unresolved bool // the word has parts known only at run time
	word       string
	paths      []string // absolute, one per possible cwd; empty when unresolved
	glob       bool
	partial    string
}

func (a *analyzer) resolve(w *syntax.Word) target {
	t := target{partial: partial(w), glob: hasGlob(w) || a.usesGlobVar(w)}
	s, ok := a.literal(w)
	if !ok {
		t.word, t.unresolved = t.partial, true
		return t
	}
	t.word = s
	if s == "" {
		return t
	}
	if filepath.IsAbs(s) {
		t.paths = []string{filepath.Clean(s)}
		if a.env.Resolve != nil && !t.glob {
			if r := a.env.Resolve(t.paths[0]); r != t.paths[0] {
				t.paths = append(t.paths, r)
			}
		}
		return t
	}
	for _, cwd := range a.cwds {
		if cwd == "" {
			t.paths = nil // an unknown directory: unresolved
			return t
		}
		t.paths = append(t.paths, filepath.Join(cwd, s))
	}
	if a.env.Resolve != nil && !t.glob {
		for _, p := range t.paths {
			if r := a.env.Resolve(p); r != p {
				t.paths = append(t.paths, r)
			}
		}
	}
	return t
}

func (a *analyzer) resolveString(s string) target {
	return a.resolve(&syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: s}}})
}

// representative managed paths a glob is matched against (dirs end in /).
var representative = []string{
	".asdd/state/", ".asdd/state/manifest.json", ".asdd/state/journal.ndjson", ".asdd/state/.lock",
	".asdd/escalations/", ".asdd/config.yaml", ".impl/manifest.json", ".impl/manifest.journal.ndjson",
	".impl/.manifest.lock", ".agents/tmp/state.json", ".agents/tmp/state.json.lock", ".agents/tmp/state.journal.ndjson",
	".workflow/.cycle/", ".workflow/.cycle/cycle.json", "docs/agent-failure-log.md",
}

// check records a write of t when t is a managed file (or, with dir, a
// directory holding managed files).
func (a *analyzer) check(op string, t target, dir bool) {
	if t.word == "" && t.partial == "" && !t.unresolved {
		return
	}
	if len(t.paths) == 0 {
		// An unresolved target: a path that mentions a managed file, or a
		// write to a path computed at run time (read from stdin, a loop
		// over a listing) in a command that mentions one, cannot be
		// decided.
		if MightBeManaged(t.partial) || MightBeManaged(t.word) || (!a.lenient && MightBeManaged(a.src)) {
			a.writes = append(a.writes, Write{Op: op, Word: t.word, Unsure: true})
		}
		return
	}
	for _, p := range t.paths {
		for _, root := range a.env.Roots {
			rel, err := filepath.Rel(root, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			rel = filepath.ToSlash(rel)
			if t.glob {
				for _, r := range representative {
					isDir := strings.HasSuffix(r, "/")
					r = strings.TrimSuffix(r, "/")
					if m, _ := path.Match(rel, r); m || (dir && globAncestor(rel, r)) {
						a.writes = append(a.writes, Write{Op: op, Word: t.word, Rel: r, Kind: Classify(r + map[bool]string{true: "/x", false: ""}[isDir]), Unsure: true})
						return
					}
				}
				continue
			}
			if k := Classify(rel); k != NotManaged {
				a.writes = append(a.writes, Write{Op: op, Word: t.word, Rel: rel, Kind: k})
				return
			}
			if dir && Contains(rel) {
				a.writes = append(a.writes, Write{Op: op, Word: t.word, Rel: rel + "/", Kind: ASDD})
				return
			}
		}
	}
}

// globAncestor reports whether pattern matches a directory above r.
func globAncestor(pattern, r string) bool {
	for d := path.Dir(r); d != "." && d != "/"; d = path.Dir(d) {
		if m, _ := path.Match(pattern, d); m {
			return true
		}
	}
	return false
}

func (a *analyzer) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	case syntax.DplOut: // >&word: a file unless a descriptor or -
		if r.Word != nil {
			if s, ok := a.literal(r.Word); ok && (s == "-" || strings.Trim(s, "0123456789") == "" || strings.TrimSuffix(s, "-") != s && strings.Trim(strings.TrimSuffix(s, "-"), "0123456789") == "") {
				return
			}
		}
	default:
		return
	}
	if r.Word == nil {
		return
	}
	a.check(r.Op.String(), a.resolve(r.Word), false)
}

// wrappers run their operand as a command.
var wrappers = map[string]bool{"sudo": true, "env": true, "command": true, "exec": true, "nohup": true, "time": true,
	"nice": true, "timeout": true, "stdbuf": true, "ionice": true, "builtin": true, "doas": true, "chronic": true}

// readers never write the files they name.
var readers = map[string]bool{"cat": true, "less": true, "more": true, "head": true, "tail": true, "grep": true,
	"egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true, "wc": true, "ls": true, "stat": true,
	"file": true, "diff": true, "cmp": true, "comm": true, "sha256sum": true, "sha1sum": true, "sha512sum": true,
	"md5sum": true, "b2sum": true, "cksum": true, "jq": true, "gojq": true, "test": true, "[": true, "echo": true,
	"printf": true, "realpath": true, "readlink": true, "dirname": true, "basename": true, "tree": true, "du": true,
	"xxd": true, "hexdump": true, "od": true, "strings": true, "cut": true, "tr": true, "column": true, "bat": true,
	"nl": true, "true": true, "false": true, "pwd": true, "which": true, "type": true, "custodian": true,
	"fx": true, "jless": true, "view": true, "sleep": true, "exit": true, "return": true, "read": true, "wait": true,
	"export": true, "set": true, "unset": true, "shift": true, "local": true}

// writers write every operand.
var writers = map[string]bool{"tee": true, "rm": true, "unlink": true, "shred": true, "truncate": true,
	"touch": true, "rmdir": true, "chmod": true, "chown": true, "chgrp": true, "chattr": true, "setfacl": true,
	"sponge": true, "vi": true, "vim": true, "nvim": true, "nano": true, "emacs": true, "ed": true, "ex": true,
	"mkfifo": true, "srm": true}

// optsWithValue lists, per command, the short options that take a value.
var optsWithValue = map[string]string{"truncate": "sr", "touch": "dtr", "cp": "tS", "mv": "tS", "install": "mogtS",
	"ln": "tS", "sed": "ef", "perl": "eEIMmx", "sort": "okTtS", "tee": "", "chmod": "", "chown": "", "rsync": "e",
	"yq": "", "git": "C"}

func (a *analyzer) call(c *syntax.CallExpr, depth int) {
	args := c.Args
	name, ok := a.literal(args[0])
	if !ok {
		name = partial(args[0])
	}
	base := path.Base(name)
	for wrappers[base] && len(args) > 1 {
		args = args[1:]
		for len(args) > 1 {
			s, _ := a.literal(args[0])
			if strings.HasPrefix(s, "-") || (base == "env" && strings.Contains(s, "=")) || (base == "timeout" && s != "" && strings.Trim(s, "0123456789.smhd") == "") {
				if base == "sudo" && (s == "-u" || s == "-g") {
					args = args[1:]
				}
				args = args[1:]
				continue
			}
			break
		}
		if name, ok = a.literal(args[0]); !ok {
			name = partial(args[0])
		}
		base = path.Base(name)
	}
	if base == "task-manifest.sh" {
		a.rewrite(c, args, 1)
		return
	}
	ops := args[1:]
	switch base {
	case "cd", "pushd":
		a.cd(ops)
		return
	case "bash", "sh", "zsh", "dash", "ksh":
		a.shell(c, args, depth)
		return
	case "source", ".":
		a.unknown(base, ops)
		return
	case "xargs", "parallel":
		a.xargs(base, ops)
		return
	case "eval":
		var parts []string
		for _, w := range ops {
			s, ok := a.literal(w)
			if !ok {
				a.unknown("eval", ops)
				return
			}
			parts = append(parts, s)
		}
		a.nested("eval", strings.Join(parts, " "), depth)
		return
	}
	if readers[base] {
		return
	}
	words, flags := a.operands(base, ops)
	switch {
	case writers[base]:
		dir := base == "rm" || base == "rmdir" || base == "shred" || base == "srm" || base == "chmod" || base == "chown" || base == "chgrp"
		for _, t := range words {
			a.check(base, t, dir)
		}
	case base == "mv" || base == "cp" || base == "install" || base == "ln" || base == "rsync" || base == "scp":
		a.targetDir = nil
		if t, ok := flagValue(a, ops, "-t", "--target-directory"); ok {
			a.targetDir = &t
		}
		a.copyLike(base, words, flags)
	case base == "sed":
		a.inPlace("sed -i", base, ops, words, flags)
	case base == "perl":
		a.inPlace("perl -i", base, ops, words, flags)
	case base == "yq":
		if flags["-i"] || flags["--inplace"] {
			for _, t := range words {
				a.check("yq -i", t, false)
			}
		}
	case base == "sort":
		if v, ok := flagValue(a, ops, "-o", "--output"); ok {
			a.check("sort -o", v, false)
		}
	case base == "uniq":
		if len(words) > 1 {
			a.check("uniq", words[1], false)
		}
	case base == "dd":
		for _, w := range ops {
			if s, ok := a.literal(w); ok && strings.HasPrefix(s, "of=") {
				a.check("dd of=", a.resolveString(s[3:]), false)
			} else if !ok && strings.HasPrefix(partial(w), "of=") {
				a.check("dd of=", target{word: partial(w), partial: partial(w)}, false)
			}
		}
	case base == "find":
		a.find(ops)
	case base == "git":
		a.git(ops)
	case base == "awk" || base == "gawk" || base == "mawk":
		if flags["-i"] {
			for _, t := range words[1:] {
				a.check(base+" -i", t, false)
			}
		}
		if len(words) > 0 && MightBeManaged(words[0].partial) {
			a.writes = append(a.writes, Write{Op: base, Word: words[0].word, Unsure: true})
		}
	default:
		a.unknown(base, ops)
	}
}

// operands returns the non-option arguments (after skipping the values of
// options that take one) and the options seen.
func (a *analyzer) operands(base string, ops []*syntax.Word) ([]target, map[string]bool) {
	flags := map[string]bool{}
	var words []target
	withValue := optsWithValue[base]
	for i := 0; i < len(ops); i++ {
		s, ok := a.literal(ops[i])
		if ok && s == "--" {
			for _, w := range ops[i+1:] {
				words = append(words, a.resolve(w))
			}
			break
		}
		if ok && strings.HasPrefix(s, "-") && s != "-" {
			if strings.HasPrefix(s, "--") {
				k, _, _ := strings.Cut(s, "=")
				flags[k] = true
				continue
			}
			flags[s] = true
			for j, r := range s[1:] {
				flags["-"+string(r)] = true
				if strings.ContainsRune(withValue, r) {
					if j == len(s)-2 {
						i++ // the value is the next word
					}
					break
				}
			}
			continue
		}
		words = append(words, a.resolve(ops[i]))
	}
	return words, flags
}

func flagValue(a *analyzer, ops []*syntax.Word, short, long string) (target, bool) {
	for i, w := range ops {
		s, _ := a.literal(w)
		switch {
		case s == short || s == long:
			if i+1 < len(ops) {
				return a.resolve(ops[i+1]), true
			}
		case strings.HasPrefix(s, long+"="):
			return a.resolveString(s[len(long)+1:]), true
		case strings.HasPrefix(s, short) && len(s) > len(short) && !strings.HasPrefix(s, "--"):
			return a.resolveString(s[len(short):]), true
		}
	}
	return target{}, false
}

func (a *analyzer) copyLike(base string, words []target, flags map[string]bool) {
	if len(words) == 0 {
		return
	}
	srcs, dest := words[:len(words)-1], words[len(words)-1]
	if a.targetDir != nil {
		srcs, dest = words, *a.targetDir
	}
	if base == "mv" {
		for _, s := range srcs {
			a.check("mv", s, true) // moving a managed file away deletes it
		}
	}
	a.check(base, dest, false)
	// dest may be a directory: the copies land as dest/<base of src>.
	for _, s := range srcs {
		b := path.Base(filepath.ToSlash(s.word))
		if b == "" || b == "." || b == "/" {
			continue
		}
		d := dest
		d.word = strings.TrimSuffix(dest.word, "/") + "/" + b
		d.partial = strings.TrimSuffix(dest.partial, "/") + "/" + b
		d.paths = nil
		for _, p := range dest.paths {
			d.paths = append(d.paths, filepath.Join(p, b))
		}
		if len(dest.paths) == 0 && !MightBeManaged(d.partial) {
			continue
		}
		a.check(base, d, false)
	}
}

// inPlace handles sed -i and perl -i: every file operand is written.
func (a *analyzer) inPlace(op, base string, ops []*syntax.Word, words []target, flags map[string]bool) {
	inplace := false
	for _, w := range ops {
		s, ok := a.literal(w)
		if !ok || !strings.HasPrefix(s, "-") {
			continue
		}
		if strings.HasPrefix(s, "--in-place") || (!strings.HasPrefix(s, "--") && strings.Contains(strings.SplitN(s[1:], "e", 2)[0], "i")) {
			inplace = true
		}
	}
	script := !flags["-e"] && !flags["-f"] && !flags["--expression"] && !flags["--file"]
	if base == "perl" {
		script = false // perl -i takes its program with -e
	}
	files := words
	if script && len(files) > 0 {
		if MightBeManaged(files[0].partial) {
			a.writes = append(a.writes, Write{Op: base, Word: files[0].word, Unsure: true})
		}
		files = files[1:]
	}
	if !inplace {
		return
	}
	for _, t := range files {
		a.check(op, t, false)
	}
}

func (a *analyzer) find(ops []*syntax.Word) {
	writes := false
	for _, w := range ops {
		switch s, _ := a.literal(w); s {
		case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
			writes = true
		}
	}
	if !writes {
		return
	}
	var paths []target
	for _, w := range ops {
		s, ok := a.literal(w)
		if ok && (strings.HasPrefix(s, "-") || s == "!" || s == "(") {
			break
		}
		paths = append(paths, a.resolve(w))
	}
	if len(paths) == 0 {
		paths = []target{a.resolveString(".")}
	}
	for _, t := range paths {
		a.check("find -delete/-exec", t, true)
	}
}

func (a *analyzer) git(ops []*syntax.Word) {
	words, _ := a.operands("git", ops)
	if len(words) == 0 {
		return
	}
	switch words[0].word {
	case "checkout", "restore", "rm", "mv", "clean", "stash", "reset", "apply":
		for _, t := range words[1:] {
			a.check("git "+words[0].word, t, true)
		}
	}
}

func (a *analyzer) cd(ops []*syntax.Word) {
	var dest string
	for _, w := range ops {
		s, ok := a.literal(w)
		if !ok {
			a.cwds = append(a.cwds, "")
			return
		}
		if !strings.HasPrefix(s, "-") {
			dest = s
			break
		}
	}
	switch {
	case dest == "":
		dest = a.env.Home
	case dest == "-":
		dest = ""
	}
	next := slices.Clone(a.cwds)
	for _, c := range a.cwds {
		switch {
		case dest == "":
			next = append(next, "")
		case filepath.IsAbs(dest):
			next = append(next, filepath.Clean(dest))
		case c == "":
			next = append(next, "")
		default:
			next = append(next, filepath.Join(c, dest))
		}
	}
	// Earlier directories stay possible: a cd inside a subshell or a
	// failed cd leaves the shell where it was.
	slices.Sort(next)
	a.cwds = slices.Compact(next)
}

// shell handles bash/sh: -c STRING is analysed as a command, a script
// named task-manifest.sh is rewritten, any other script is unknown.
func (a *analyzer) shell(c *syntax.CallExpr, args []*syntax.Word, depth int) {
	for i := 1; i < len(args); i++ {
		s, ok := a.literal(args[i])
		if !ok {
			if path.Base(partial(args[i])) == "task-manifest.sh" {
				a.rewrite(c, args, i+1)
				return
			}
			a.unknown("bash", args[i:])
			return
		}
		if s == "-c" {
			if i+1 >= len(args) {
				return
			}
			code, ok := a.literal(args[i+1])
			if !ok {
				a.unknown("bash -c", args[i+1:])
				return
			}
			a.nested("bash -c", code, depth)
			return
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			if s == "-o" || s == "+o" || s == "-O" || s == "+O" {
				i++
			}
			continue
		}
		if path.Base(s) == "task-manifest.sh" {
			a.rewrite(c, args, i+1)
			return
		}
		a.unknown("bash "+s, args[i+1:])
		return
	}
}

func (a *analyzer) nested(op, code string, depth int) {
	if depth >= maxDepth {
		if MightBeManaged(code) {
			a.writes = append(a.writes, Write{Op: op, Word: code, Unsure: true})
		}
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(code), "")
	if err != nil {
		if MightBeManaged(code) {
			a.writes = append(a.writes, Write{Op: op, Word: code, Unsure: true})
		}
		return
	}
	rewrote, src := a.rewrote, a.src
	a.src = code
	a.walk(f, depth+1)
	a.src = src
	if a.rewrote != rewrote {
		// A task-manifest.sh call inside a string cannot be rewritten in
		// place: deny it instead, naming the command to run.
		a.rewrote = rewrote
		a.writes = append(a.writes, Write{Op: op + " task-manifest.sh", Word: code, Kind: Impl, Unsure: true})
	}
}

// xargs handles xargs CMD: CMD's operands come from stdin, unknown here.
// When CMD may write (anything but a reader) and the command mentions a
// managed file, it cannot be decided.
func (a *analyzer) xargs(base string, ops []*syntax.Word) {
	for i := 0; i < len(ops); i++ {
		s, ok := a.literal(ops[i])
		if !ok {
			break
		}
		if strings.HasPrefix(s, "-") {
			switch s {
			case "-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s", "--delimiter", "--arg-file", "--max-args", "--max-procs":
				i++
			}
			continue
		}
		if readers[path.Base(s)] {
			return
		}
		if MightBeManaged(a.src) {
			a.writes = append(a.writes, Write{Op: base + " " + path.Base(s), Word: "(paths from stdin)", Unsure: true})
		}
		return
	}
}

// unknown handles a command whose effect on its operands is unknown: any
// operand that names a managed path (or mentions one, as inline code does)
// is denied.
func (a *analyzer) unknown(base string, ops []*syntax.Word) {
	a.lenient = true
	defer func() { a.lenient = false }()
	for _, w := range ops {
		t := a.resolve(w)
		n := len(a.writes)
		a.check(base, t, false)
		if len(a.writes) > n {
			a.writes[n].Unsure = true
			continue
		}
		if MightBeManaged(t.partial) {
			a.writes = append(a.writes, Write{Op: base, Word: t.word, Unsure: true})
		}
	}
}

// rewrite replaces a task-manifest.sh call (its arguments start at
// args[from]) with `custodian impl ARGS`.
func (a *analyzer) rewrite(c *syntax.CallExpr, args []*syntax.Word, from int) {
	bin := a.binary
	if bin == "" {
		bin = "custodian"
	}
	lit := func(s string) *syntax.Word {
		if strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			return &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: s}}}
		}
		return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
	}
	c.Args = append([]*syntax.Word{lit(bin), lit("impl")}, args[from:]...)
	a.rewrote = true
}
