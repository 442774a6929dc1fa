package claude

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The analyser's budget. Claude Code lets a call through when its hook
// does not answer within the installed timeout (10 s), so the analysis is
// linear in the command's size and stops well before: a command it cannot
// finish within the budget is denied.
const (
	// MaxSteps bounds the analysis of one command: syntax nodes visited,
	// words expanded, paths resolved.
	MaxSteps = 200_000
	// MaxTime bounds its wall time (a backstop for the steps).
	MaxTime = 1500 * time.Millisecond
	// MaxCommand is the longest command analysed at all.
	MaxCommand = 256 << 10
	// MaxNesting is the deepest nesting of parentheses and braces
	// analysed at all (the parser's time grows with it).
	MaxNesting = 256

	maxCwds   = 16  // directories a command may be in; more: unknown
	maxFields = 256 // fields a word may expand to; more: unknown
	maxVarLen = 4096
)

// PathEnv is what a path in a command is resolved against.
type PathEnv struct {
	Cwd        string              // the command's working directory (absolute; "" unknown)
	Home       string              // for ~
	ProjectDir string              // $CLAUDE_PROJECT_DIR
	Roots      []string            // absolute project roots managed paths are relative to
	Resolve    func(string) string // follows symbolic links (Env.Resolve); nil: none
	// Tracked reports whether git tracks a state document under the
	// project root (Env.Tracked); nil: assume it does.
	Tracked func(root string) bool
	// ReadPatch reads a patch file `git apply` is given (Env.ReadPatch);
	// nil or an error: its content is unknown.
	ReadPatch func(string) ([]byte, error)
}

// Write is one write of a managed file that a command would do.
type Write struct {
	Op     string // what writes: ">", "tee", "rm", "sed -i", …
	Word   string // the path as written
	Rel    string // relative to its project root ("" when not resolved)
	Kind   Kind
	Unsure bool   // the path or the command could not be resolved: denied to be safe
	Why    string // why an unsure target could not be determined
}

func (w Write) String() string {
	target := w.Rel
	if target == "" {
		target = w.Word
	}
	if w.Unsure {
		if target == "" {
			why := w.Why
			if why == "" {
				why = "it is known only when the command runs"
			}
			return fmt.Sprintf("a target that could not be determined (%s: %s)", w.Op, why)
		}
		return fmt.Sprintf("%s (%s: cannot tell whether it writes there)", target, w.Op)
	}
	return fmt.Sprintf("%s (%s)", target, w.Op)
}

// Bash is the analysis of one Bash command.
type Bash struct {
	Writes []Write
	// Human lists the custodian commands in it that are a human's decision
	// ("custodian approve"): an agent may not run them.
	Human []string
	// Rewritten is the command with every task-manifest.sh call replaced by
	// `custodian impl` with the same arguments; "" when there is none.
	Rewritten string
	// Exhausted is set when the analysis ran out of its budget (MaxSteps,
	// MaxTime, MaxCommand): the command is denied.
	Exhausted bool
	Steps     int // the steps the analysis took
}

// AnalyzeBash parses a Bash command and lists the writes of managed files
// it would do. binary is the custodian command the rewrite calls. A command
// that does not parse is an error: the caller decides with MightBeManaged.
func AnalyzeBash(cmd string, env PathEnv, binary string) (Bash, error) {
	if len(cmd) > MaxCommand || nesting(cmd) > MaxNesting {
		return Bash{Exhausted: true}, nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return Bash{}, fmt.Errorf("parse the command: %w", err)
	}
	a := &analyzer{env: env, cwds: []string{env.Cwd}, vars: map[string]string{}, globs: map[string]bool{},
		assigned: map[string]int{}, links: map[string]string{}, binary: binary, deadline: time.Now().Add(MaxTime)}
	a.steps = len(cmd) / 64
	if env.ProjectDir != "" {
		a.vars["CLAUDE_PROJECT_DIR"] = env.ProjectDir
	}
	if env.Home != "" {
		a.vars["HOME"] = env.Home
	}
	a.setSrc(cmd)
	a.count(f)
	a.walk(f, 0)
	res := Bash{Writes: a.writes, Human: a.human, Exhausted: a.exhausted, Steps: a.steps}
	if a.rewrote && !a.exhausted {
		var sb strings.Builder
		if err := syntax.NewPrinter(syntax.Minify(false)).Print(&sb, f); err != nil {
			return Bash{}, fmt.Errorf("print the rewritten command: %w", err)
		}
		res.Rewritten = strings.TrimRight(sb.String(), "\n")
	}
	return res, nil
}

// nesting is the deepest nesting of ( and { in cmd, quotes ignored (an
// over-estimate is safe: the command is denied).
func nesting(cmd string) int {
	depth, most := 0, 0
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '(', '{':
			depth++
			most = max(most, depth)
		case ')', '}':
			depth = max(0, depth-1)
		}
	}
	return most
}

type analyzer struct {
	env    PathEnv
	cwds   []string // every directory the command may be in at this point ("" unknown)
	vars   map[string]string
	writes []Write
	human  []string
	binary string
	// rewrote is set when a task-manifest.sh call was rewritten.
	rewrote bool
	// globs are variables holding a pattern (for f in PATTERN).
	globs map[string]bool
	// assigned counts the assignments of each variable anywhere in the
	// command: one assigned twice (in a loop, a function, by unset, read
	// or printf -v) has no single known value.
	assigned map[string]int
	// opaque is set once something may have changed any variable
	// (source, an eval of unknown code, a nameref): none is known after.
	opaque bool
	// links are the symbolic and hard links the command makes: link path
	// → what it points to ("" unknown), both absolute.
	links      map[string]string
	targetDir  *target // cp/mv -t DIR
	src        string  // the source being walked (for comment positions)
	srcManaged bool    // MightBeManaged(src)
	srcGitEnv  bool    // src sets git's work tree by the environment
	stdin      string  // the here-documents and here-strings of the statement
	stdinFile  *target // the file the statement reads (< FILE)

	steps     int
	deadline  time.Time
	exhausted bool
}

const maxDepth = 4 // bash -c inside bash -c …

// tick counts n steps of work; it reports false once the budget is spent.
func (a *analyzer) tick(n int) bool {
	if a.exhausted {
		return false
	}
	before := a.steps
	a.steps += n
	if a.steps > MaxSteps || (a.steps/1024 != before/1024 && time.Now().After(a.deadline)) {
		a.exhausted = true
	}
	return !a.exhausted
}

func (a *analyzer) setSrc(src string) {
	a.src, a.srcManaged = src, MightBeManaged(src)
	a.srcGitEnv = strings.Contains(src, "GIT_WORK_TREE") || strings.Contains(src, "GIT_DIR")
}

func (a *analyzer) walk(node syntax.Node, depth int) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if !a.tick(1) {
			return false
		}
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
			a.stdin, a.stdinFile = "", nil
			for _, r := range n.Redirs {
				if r.Op == syntax.RdrIn && r.Word != nil {
					t := a.resolve(r.Word)
					a.stdinFile = &t
				}
				a.redirect(r)
				if r.Hdoc != nil {
					a.stdin += partial(r.Hdoc)
				}
				if r.Op == syntax.WordHdoc && r.Word != nil {
					a.stdin += partial(r.Word)
				}
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

// count tallies the assignments of every variable in f (a pre-pass, since
// a loop or a function runs its assignments in another order than they
// are written) and forgets the values of those assigned more than once.
func (a *analyzer) count(f syntax.Node) {
	bump := func(name string, n int) {
		a.assigned[name] += n
		if a.assigned[name] > 1 {
			delete(a.vars, name)
			delete(a.globs, name)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if !a.tick(1) {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil {
				bump(n.Name.Value, 1)
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				if as.Name == nil && as.Value != nil && strings.HasPrefix(as.Value.Lit(), "-") && strings.Contains(as.Value.Lit(), "n") {
					a.makeOpaque() // declare -n: a name for another variable
				}
			}
		case *syntax.WordIter:
			if n.Name != nil {
				bump(n.Name.Value, 1)
			}
		case *syntax.ParamExp:
			if n.Param != nil && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				bump(n.Param.Value, 2)
			}
		case *syntax.BinaryArithm:
			if w, ok := n.X.(*syntax.Word); ok && n.Op >= syntax.Assgn && n.Op <= syntax.ShrAssgn {
				bump(w.Lit(), 2)
			}
		case *syntax.UnaryArithm:
			if w, ok := n.X.(*syntax.Word); ok && (n.Op == syntax.Inc || n.Op == syntax.Dec) {
				bump(w.Lit(), 2)
			}
		case *syntax.CallExpr:
			// Builtins that set the variables they name.
			if len(n.Args) == 0 {
				break
			}
			args := n.Args
			for len(args) > 1 && (args[0].Lit() == "builtin" || args[0].Lit() == "command") {
				args = args[1:]
			}
			setter := args[0].Lit()
			for i, w := range args[1:] {
				s := w.Lit()
				switch setter {
				case "unset", "read", "mapfile", "readarray", "getopts", "let":
				case "printf":
					if i == 0 || args[i].Lit() != "-v" {
						continue
					}
				default:
					return true
				}
				if name, _, _ := strings.Cut(s, "="); name != "" {
					name, _, _ = strings.Cut(name, "[")
					bump(name, 2)
				}
			}
		}
		return true
	})
}

func (a *analyzer) makeOpaque() {
	a.opaque = true
	clear(a.vars)
	clear(a.globs)
}

func (a *analyzer) assign(as *syntax.Assign) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	delete(a.globs, name)
	if a.opaque || a.assigned[name] > 1 || as.Value == nil || as.Array != nil || as.Index != nil || as.Append {
		delete(a.vars, name)
		return
	}
	if v, ok := a.literal(as.Value); ok && len(v) <= maxVarLen {
		a.vars[name] = v
	} else {
		delete(a.vars, name)
	}
}

// loop gives a for loop's variable its items: when one is a pattern, the
// variable is a pattern; when one is unknown, the variable is unknown.
func (a *analyzer) loop(wi *syntax.WordIter) {
	name := wi.Name.Value
	delete(a.vars, name)
	delete(a.globs, name)
	if a.opaque || a.assigned[name] > 1 {
		return
	}
	var vals []string
	glob := false
	for _, w := range wi.Items {
		fs, ok := a.fields(w)
		if !ok {
			return
		}
		vals = append(vals, fs...)
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

// literal expands a word with the known variables, its fields joined by
// spaces; ok is false when it holds anything else (an unknown variable, a
// command substitution).
func (a *analyzer) literal(w *syntax.Word) (string, bool) {
	fs, ok := a.fields(w)
	return strings.Join(fs, " "), ok
}

// fields expands a word as bash would (brace expansion, known variables,
// field splitting, quote removal; no globbing); ok is false when it holds
// anything unknown or expands to too many fields.
func (a *analyzer) fields(w *syntax.Word) (fs []string, ok bool) {
	defer func() {
		if recover() != nil { // the expander on a node it does not expect
			fs, ok = nil, false
		}
	}()
	// The walks of a word cost its length: charged, so that words nested
	// in words ($($(…))) cannot make the work quadratic unnoticed.
	if w == nil || !a.tick(1+span(w)/16) || a.unknownParam(w) != "" {
		return nil, false
	}
	cfg := &expand.Config{Env: envOf(a.vars), NoUnset: true, ProcSubst: errProcSubst}
	for f, err := range expand.FieldsSeq(cfg, w) {
		if err != nil || len(fs) >= maxFields || !a.tick(1+len(f)/64) {
			return nil, false
		}
		fs = append(fs, f)
	}
	return fs, true
}

// span is the length of w's source.
func span(w *syntax.Word) int {
	if !w.Pos().IsValid() || !w.End().IsValid() {
		return 0
	}
	return int(w.End().Offset()) - int(w.Pos().Offset())
}

// unknownParam names the first variable in w whose value is not known
// ("" when there is none): ${X:-default} must not pass for its default.
func (a *analyzer) unknownParam(w *syntax.Word) string {
	unknown := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil {
			if _, known := a.vars[p.Param.Value]; !known || p.Excl {
				unknown = p.Param.Value
			}
		}
		return unknown == ""
	})
	return unknown
}

var errUnknown = errors.New("not a literal")

func errProcSubst(*syntax.ProcSubst) (string, error) { return "", errUnknown }

// partial is the word's literal text with unknown parts left out (the
// defaults of ${X:-…} kept), for MightBeManaged.
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
			case *syntax.ParamExp:
				if p.Exp != nil && p.Exp.Word != nil {
					parts(p.Exp.Word.Parts)
				}
			case *syntax.BraceExp:
				for _, e := range p.Elems {
					parts(e.Parts)
					sb.WriteByte(' ')
				}
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
	glob := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			glob = glob || strings.ContainsAny(n.Value, "*?[")
		case *syntax.SglQuoted, *syntax.DblQuoted, *syntax.CmdSubst:
			return false
		}
		return !glob
	})
	return glob
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

// target is one path a command names (or several, when the word expands
// to several fields), resolved.
type target struct {
	unresolved bool // the word has parts known only at run time
	word       string
	paths      []string // absolute, one per field and possible cwd; empty when unresolved
	glob       bool
	partial    string
	why        string // why it is unresolved
}

func (a *analyzer) resolve(w *syntax.Word) target {
	a.tick(span(w) / 16)
	t := target{partial: partial(w), glob: hasGlob(w) || a.usesGlobVar(w)}
	fs, ok := a.fields(w)
	if !ok {
		t.word, t.unresolved, t.why = t.partial, true, a.whyUnknown(w)
		return t
	}
	t.word = strings.Join(fs, " ")
	for _, s := range fs {
		if s == "" {
			continue
		}
		if !filepath.IsAbs(s) {
			for _, cwd := range a.cwds {
				if cwd == "" {
					// An unknown directory: unresolved.
					t.paths, t.unresolved, t.why = nil, true, "the directory it is relative to is not known before the command runs"
					return t
				}
			}
		}
		for _, p := range a.absolute(s) {
			if !a.tick(1) {
				return t
			}
			t.paths = append(t.paths, p)
			if a.env.Resolve != nil && !t.glob {
				if r := a.env.Resolve(p); r != p {
					t.paths = append(t.paths, r)
				}
			}
			// A link the command itself made earlier.
			for from, to := range a.links {
				if rest, ok := strings.CutPrefix(p, from); ok && (rest == "" || rest[0] == '/') {
					if to == "" {
						t.paths, t.unresolved, t.why = nil, true, "it goes through a link to an unknown place made by the command"
						return t
					}
					t.paths = append(t.paths, to+rest)
				}
			}
		}
	}
	return t
}

// absolute is s (a path from the command) against every possible cwd.
func (a *analyzer) absolute(s string) []string {
	if filepath.IsAbs(s) {
		return []string{filepath.Clean(s)}
	}
	var out []string
	for _, cwd := range a.cwds {
		out = append(out, filepath.Join(cwd, s))
	}
	return out
}

// whyUnknown says why a word could not be expanded.
func (a *analyzer) whyUnknown(w *syntax.Word) string {
	why := ""
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			why = "it is computed by a command substitution, $(…)"
		case *syntax.ProcSubst:
			why = "it is a process substitution"
		case *syntax.BraceExp:
			why = "its brace expansion is too large"
		case *syntax.ParamExp:
			if n.Param != nil {
				if _, ok := a.vars[n.Param.Value]; !ok {
					why = "it depends on $" + n.Param.Value + ", whose value is not known before the command runs"
				}
			}
		}
		return why == ""
	})
	if why == "" {
		why = "it is known only when the command runs"
	}
	return why
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
	".claude/settings.json", ".claude/settings.local.json",
}

// scope is what a command does to a path it names.
type scope int

const (
	// file: it writes that file.
	file scope = iota
	// tree: it writes everything under the path (rm -r, tar -x into it):
	// the project root itself or any directory holding managed files.
	tree
	// named: a command unknown to the analyser names the path: a managed
	// file or a directory holding some, other than the project root
	// (`pytest .` is not taken for a write of every file).
	named
)

// check records a write of t when t is a managed file (or, per sc, a
// directory holding managed files).
func (a *analyzer) check(op string, t target, sc scope) {
	if t.word == "" && t.partial == "" && !t.unresolved {
		return
	}
	if len(t.paths) == 0 {
		// An unresolved target: a path that mentions a managed file, or a
		// write to a path computed at run time (read from stdin, a loop
		// over a listing) in a command that mentions one, cannot be
		// decided.
		if t.unresolved && (MightBeManaged(t.partial) || MightBeManaged(t.word) || a.srcManaged) {
			a.writes = append(a.writes, Write{Op: op, Word: t.word, Unsure: true, Why: t.why})
		}
		return
	}
	for _, p := range t.paths {
		if rel, ok := UserSettings(a.env.Home, p, sc != file, sc == tree); ok {
			a.writes = append(a.writes, Write{Op: op, Word: t.word, Rel: rel, Kind: Settings})
			return
		}
		for _, root := range a.env.Roots {
			if !a.tick(1) {
				return
			}
			rel, err := filepath.Rel(root, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			rel = filepath.ToSlash(rel)
			if t.glob {
				for _, r := range representative {
					isDir := strings.HasSuffix(r, "/")
					r = strings.TrimSuffix(r, "/")
					if globMatch(rel, r) || (sc != file && globAncestor(rel, r)) {
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
			if sc != file && Contains(rel) && (sc == tree || rel != ".") {
				shown := rel + "/"
				if rel == "." {
					shown = "the project root (it holds managed files)"
				}
				a.writes = append(a.writes, Write{Op: op, Word: t.word, Rel: shown, Kind: ASDD})
				return
			}
		}
	}
}

// globAncestor reports whether pattern matches a directory above r.
func globAncestor(pattern, r string) bool {
	for d := path.Dir(r); d != "." && d != "/"; d = path.Dir(d) {
		if globMatch(pattern, d) {
			return true
		}
	}
	return false
}

// globMatch is path.Match as bash globs: a name starting with a dot is
// matched only by a pattern that starts with one (no dotglob).
func globMatch(pattern, name string) bool {
	if m, _ := path.Match(pattern, name); !m {
		return false
	}
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	for i := range min(len(ps), len(ns)) {
		if strings.HasPrefix(ns[i], ".") && !strings.HasPrefix(ps[i], ".") {
			return false
		}
	}
	return true
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
	a.check(r.Op.String(), a.resolve(r.Word), file)
}

// wrappers run their operand as a command.
var wrappers = map[string]bool{"sudo": true, "env": true, "command": true, "exec": true, "nohup": true, "time": true,
	"nice": true, "timeout": true, "stdbuf": true, "ionice": true, "builtin": true, "doas": true, "chronic": true}

// readers never write the files they name (their options that do, such
// as less -o, are handled in call).
var readers = map[string]bool{"cat": true, "less": true, "more": true, "head": true, "tail": true, "grep": true,
	"egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true, "wc": true, "ls": true, "stat": true,
	"file": true, "diff": true, "cmp": true, "comm": true, "sha256sum": true, "sha1sum": true, "sha512sum": true,
	"md5sum": true, "b2sum": true, "cksum": true, "jq": true, "gojq": true, "test": true, "[": true, "echo": true,
	"printf": true, "realpath": true, "readlink": true, "dirname": true, "basename": true, "du": true,
	"hexdump": true, "od": true, "strings": true, "cut": true, "tr": true, "column": true, "bat": true,
	"nl": true, "true": true, "false": true, "pwd": true, "which": true, "type": true, "fx": true, "jless": true,
	"sleep": true, "exit": true, "return": true, "wait": true, "shift": true, "set": true, ":": true,
	"read": true, "unset": true, "mapfile": true, "readarray": true, "getopts": true, "let": true}

// writers write every operand (tree: every file under it).
var writers = map[string]scope{"tee": file, "rm": tree, "unlink": file, "shred": tree, "truncate": file,
	"touch": file, "rmdir": tree, "chmod": tree, "chown": tree, "chgrp": tree, "chattr": tree, "setfacl": tree,
	"sponge": file, "mkfifo": file, "srm": tree, "vi": file, "vim": file, "nvim": file, "view": file, "gvim": file,
	"nano": file, "emacs": file, "ed": file, "ex": file}

// editors write the files they open and any their commands name.
var editors = map[string]bool{"vi": true, "vim": true, "nvim": true, "view": true, "gvim": true, "nano": true,
	"emacs": true, "ed": true, "ex": true}

// interpreters run a program that may come from stdin or inline code.
var interpreters = map[string]bool{"python": true, "python3": true, "python2": true, "node": true, "nodejs": true,
	"deno": true, "bun": true, "ruby": true, "perl": true, "php": true, "lua": true, "Rscript": true, "osascript": true,
	"pwsh": true, "tclsh": true, "awk": true, "gawk": true, "mawk": true, "busybox": true}

// extractors write what an archive holds into their directory.
var extractors = map[string]bool{"tar": true, "bsdtar": true, "gtar": true, "unzip": true, "cpio": true,
	"7z": true, "7za": true, "unrar": true, "ar": true, "pax": true}

// optsWithValue lists, per command, the short options that take a value.
var optsWithValue = map[string]string{"truncate": "sr", "touch": "dtr", "cp": "tS", "mv": "tS", "install": "mogtS",
	"ln": "tS", "sed": "ef", "perl": "eEIMmx", "sort": "okTtS", "tee": "", "chmod": "", "chown": "", "rsync": "e",
	"yq": "", "git": "C", "tar": "fCTXbgHV", "unzip": "dxP", "xxd": "cglnosC", "awk": "fvF", "gawk": "fvFiEl",
	"find": "", "custodian": "C"}

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
	if strings.ContainsAny(name, " \t\n") { // env -S 'CMD ARGS', "$CMD" holding arguments
		a.unknown("a command with arguments in its name", args)
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
		a.makeOpaque()
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
				a.makeOpaque()
				a.unknown("eval", ops)
				return
			}
			parts = append(parts, s)
		}
		a.nested("eval", strings.Join(parts, " "), depth)
		return
	case "custodian":
		a.custodian(ops)
		return
	case "go":
		// go run ./cmd/custodian ARGS is the custodian too.
		if len(ops) > 1 && ops[0].Lit() == "run" {
			for i, w := range ops[1:] {
				if b, _, _ := strings.Cut(path.Base(partial(w)), "@"); b == "custodian" {
					a.custodian(ops[i+2:])
					break
				}
			}
		}
	case "less":
		for _, o := range []string{"-o", "-O", "--log-file", "--LOG-FILE"} {
			if v, ok := flagValue(a, ops, o, o); ok {
				a.check("less "+o, v, file)
			}
		}
		return
	case "tree":
		if v, ok := flagValue(a, ops, "-o", "-o"); ok {
			a.check("tree -o", v, file)
		}
		return
	case "rg":
		if v, ok := flagValue(a, ops, "--pre", "--pre"); ok && (MightBeManaged(v.partial) || MightBeManaged(v.word)) {
			a.writes = append(a.writes, Write{Op: "rg --pre", Word: v.word, Unsure: true})
		}
		return
	}
	if readers[base] {
		return
	}
	words, flags := a.operands(base, ops)
	if sc, ok := writers[base]; ok {
		for _, t := range words {
			a.check(base, t, sc)
		}
		if editors[base] { // vim -c 'w! FILE', ed scripts
			a.mentions(base, ops)
		}
		return
	}
	switch {
	case base == "xxd":
		// xxd [-r] INFILE OUTFILE writes OUTFILE.
		for _, t := range words[min(1, len(words)):] {
			a.check("xxd", t, file)
		}
	case base == "mv" || base == "cp" || base == "install" || base == "ln" || base == "rsync" || base == "scp":
		a.targetDir = nil
		if t, ok := flagValue(a, ops, "-t", "--target-directory"); ok {
			a.targetDir = &t
		}
		a.copyLike(base, words, flags)
	case base == "sed":
		a.sed(ops, words, flags)
	case base == "yq":
		if flags["-i"] || flags["--inplace"] {
			for _, t := range words {
				a.check("yq -i", t, file)
			}
		}
		a.mentions(base, ops)
	case base == "sort":
		if v, ok := flagValue(a, ops, "-o", "--output"); ok {
			a.check("sort -o", v, file)
		}
	case base == "uniq":
		if len(words) > 1 {
			a.check("uniq", words[1], file)
		}
	case base == "dd":
		for _, w := range ops {
			if s, ok := a.literal(w); ok && strings.HasPrefix(s, "of=") {
				a.check("dd of=", a.resolveString(s[3:]), file)
			} else if !ok && strings.HasPrefix(partial(w), "of=") {
				a.check("dd of=", target{word: partial(w), partial: partial(w), unresolved: true, why: a.whyUnknown(w)}, file)
			}
		}
	case base == "find":
		a.find(ops, depth)
	case base == "git":
		a.git(ops)
	case base == "patch":
		a.unknown(base, ops)
		var files []target
		if v, ok := flagValue(a, ops, "-i", "--input"); ok {
			files = append(files, v)
		} else if len(words) > 1 {
			files = append(files, words[1])
		}
		a.patches(base, files)
	case base == "awk" || base == "gawk" || base == "mawk":
		if flags["-i"] {
			for _, t := range words[min(1, len(words)):] {
				a.check(base+" -i", t, file)
			}
		}
		if len(words) > 0 && MightBeManaged(words[0].partial+" "+words[0].word) {
			a.writes = append(a.writes, Write{Op: base, Word: words[0].word, Unsure: true})
		}
		for _, w := range ops { // -f PROGFILE, -v, and the program itself
			if s := partial(w); strings.HasPrefix(s, "-") && MightBeManaged(s) {
				a.writes = append(a.writes, Write{Op: base, Word: s, Unsure: true})
			}
		}
	case extractors[base]:
		a.extract(base, ops, words, flags)
	default:
		a.unknown(base, ops)
	}
}

// mentions denies a command whose arguments (options and inline code
// included) mention a managed path.
func (a *analyzer) mentions(base string, ops []*syntax.Word) {
	for _, w := range ops {
		s, _ := a.literal(w)
		if p := partial(w); MightBeManaged(p) || MightBeManaged(s) {
			a.writes = append(a.writes, Write{Op: base, Word: p, Unsure: true})
			return
		}
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
	link := base == "ln" || flags["-l"] || flags["-s"] || flags["--link"] || flags["--symbolic-link"] || flags["--link-dest"]
	switch {
	case base == "mv":
		for _, s := range srcs {
			a.check("mv", s, tree) // moving a managed file away deletes it
		}
	case link:
		// A link to a managed file (or a directory holding some) is a
		// second name to write it by.
		for _, s := range srcs {
			a.check(base+" (a link)", s, named)
		}
		a.link(base+" (a link)", srcs, dest)
	}
	a.check(base, dest, file)
	recursive := flags["-r"] || flags["-R"] || flags["-a"] || flags["--recursive"] || flags["--archive"] || base == "rsync" || base == "scp"
	// dest may be a directory: the copies land as dest/<base of src>.
	for _, s := range srcs {
		b := path.Base(filepath.ToSlash(s.word))
		if recursive && (b == "." || strings.HasSuffix(s.word, "/") && base == "rsync") {
			a.check(base, dest, tree) // the directory's contents land in dest
			continue
		}
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
		a.check(base, d, tree)
	}
}

// link records the links `ln SRC… DEST` makes, so that a later write
// through one is a write of what it points to. A relative symbolic link
// points relative to its own directory: that target is checked too.
func (a *analyzer) link(op string, srcs []target, dest target) {
	for _, s := range srcs {
		for _, d := range dest.paths {
			if len(a.links) >= maxFields || !a.tick(1) {
				return
			}
			b := path.Base(filepath.ToSlash(s.word))
			hasBase := b != "" && b != "." && b != "/"
			switch {
			case s.unresolved || len(s.paths) == 0:
				a.links[d] = ""
				if hasBase {
					a.links[filepath.Join(d, b)] = ""
				}
			case filepath.IsAbs(s.word):
				a.links[d] = s.paths[0]
				if hasBase {
					a.links[filepath.Join(d, b)] = s.paths[0]
				}
			default: // DEST is the link, or a directory the link goes in
				links := map[string]string{d: filepath.Join(filepath.Dir(d), s.word)}
				if hasBase {
					links[filepath.Join(d, b)] = filepath.Join(d, s.word)
				}
				for link, to := range links {
					a.links[link] = to
					t := s
					t.paths = []string{to, s.paths[0]}
					a.check(op, t, named)
				}
			}
		}
	}
}

// sed: -i writes every file operand; a script (inline or -f) that names a
// managed file may write it (`w FILE`, `s///w FILE`).
func (a *analyzer) sed(ops []*syntax.Word, words []target, flags map[string]bool) {
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
	scripts := !flags["-e"] && !flags["-f"] && !flags["--expression"] && !flags["--file"]
	files := words
	if scripts && len(files) > 0 {
		files = files[1:]
	}
	a.mentionsScript("sed", ops, scripts)
	if !inplace {
		return
	}
	for _, t := range files {
		a.check("sed -i", t, file)
	}
}

// mentionsScript denies a sed whose script (the first operand, or the
// values of -e/-f/--expression/--file) mentions a managed path.
func (a *analyzer) mentionsScript(base string, ops []*syntax.Word, firstOperand bool) {
	for i, w := range ops {
		s, _ := a.literal(w)
		isScript := false
		switch {
		case strings.HasPrefix(s, "--expression=") || strings.HasPrefix(s, "--file="):
			isScript = true
		case i > 0:
			prev, _ := a.literal(ops[i-1])
			isScript = prev == "-e" || prev == "-f" || prev == "--expression" || prev == "--file" ||
				(strings.HasPrefix(prev, "-") && !strings.HasPrefix(prev, "--") && (strings.HasSuffix(prev, "e") || strings.HasSuffix(prev, "f")))
		}
		if firstOperand && !strings.HasPrefix(s, "-") {
			isScript, firstOperand = true, false
		}
		if isScript && (MightBeManaged(partial(w)) || MightBeManaged(s)) {
			a.writes = append(a.writes, Write{Op: base + " script", Word: partial(w), Unsure: true})
		}
	}
}

// extract: an archive extracted (tar -x, unzip, cpio -i, 7z x) writes
// whatever it holds under its directory (-C DIR, -d DIR, or the cwd);
// tar -c/-r writes its -f archive.
func (a *analyzer) extract(base string, ops []*syntax.Word, words []target, flags map[string]bool) {
	mode := ""
	if len(ops) == 0 {
		return
	}
	if first, ok := a.literal(ops[0]); ok && (base == "tar" || base == "bsdtar" || base == "gtar" || base == "ar") && !strings.HasPrefix(first, "-") {
		mode = first // tar xf A: the old form
		words = words[min(1, len(words)):]
	}
	has := func(c string) bool { return flags["-"+c] || strings.Contains(mode, c) }
	switch base {
	case "tar", "bsdtar", "gtar":
		if !(has("x") || flags["--extract"] || flags["--get"]) {
			if f, ok := a.tarFile(ops); ok && (has("c") || has("r") || has("u") || has("A") || flags["--create"] || flags["--append"]) {
				a.check(base+" -f", f, file)
			} else if strings.Contains(mode, "f") && len(words) > 0 && (has("c") || has("r") || has("u")) {
				a.check(base+" -f", words[0], file)
			}
			return
		}
		dir, ok := flagValue(a, ops, "-C", "--directory")
		if !ok {
			dir = a.resolveString(".")
		}
		a.check(base+" -x", dir, tree)
	case "unzip":
		dir, ok := flagValue(a, ops, "-d", "-d")
		if !ok {
			dir = a.resolveString(".")
		}
		if flags["-l"] || flags["-v"] || flags["-t"] || flags["-p"] || flags["-Z"] {
			return
		}
		a.check("unzip", dir, tree)
	case "7z", "7za":
		if len(words) == 0 || (words[0].word != "x" && words[0].word != "e") {
			return
		}
		dir := a.resolveString(".")
		for _, w := range ops {
			if s, _ := a.literal(w); strings.HasPrefix(s, "-o") {
				dir = a.resolveString(s[2:])
			}
		}
		a.check(base+" x", dir, tree)
	case "ar":
		if has("x") {
			a.check("ar x", a.resolveString("."), tree)
		}
	default: // cpio -i, pax -r, unrar
		if base == "cpio" && !has("i") || base == "pax" && !has("r") {
			return
		}
		a.check(base, a.resolveString("."), tree)
	}
	for _, t := range words {
		a.check(base, t, named)
	}
}

// tarFile is tar's archive: -f FILE, -cf FILE, -fFILE, --file[=]FILE.
func (a *analyzer) tarFile(ops []*syntax.Word) (target, bool) {
	for i, w := range ops {
		s, _ := a.literal(w)
		if v, ok := strings.CutPrefix(s, "--file="); ok {
			return a.resolveString(v), true
		}
		if s == "--file" || (strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "f")) {
			if rest := s[strings.Index(s, "f")+1:]; rest != "" && s != "--file" {
				return a.resolveString(rest), true
			}
			if i+1 < len(ops) {
				return a.resolve(ops[i+1]), true
			}
		}
	}
	return target{}, false
}

// find: -delete and -exec/-execdir/-ok CMD (a command that is not a
// reader) write under the start paths; -fprint FILE writes FILE; the
// -exec command's own arguments are analysed as a command.
func (a *analyzer) find(ops []*syntax.Word, depth int) {
	writes := false
	for i := 0; i < len(ops); i++ {
		s, _ := a.literal(ops[i])
		switch s {
		case "-delete":
			writes = true
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(ops) {
				a.check("find "+s, a.resolve(ops[i+1]), file)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(ops) {
				if e, _ := a.literal(ops[j]); e == ";" || e == "+" {
					break
				}
				j++
			}
			if sub := ops[i+1 : j]; len(sub) > 0 {
				name, _ := a.literal(sub[0])
				if !readers[path.Base(name)] {
					writes = true
				}
				if depth < maxDepth {
					rewrote := a.rewrote
					a.call(&syntax.CallExpr{Args: sub}, depth+1)
					if a.rewrote != rewrote {
						a.rewrote = rewrote
						a.writes = append(a.writes, Write{Op: "find " + s + " task-manifest.sh", Kind: Impl, Unsure: true})
					}
				}
			}
			i = j
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
		a.check("find -delete/-exec", t, tree)
	}
}

func (a *analyzer) cd(ops []*syntax.Word) {
	var dest string
	for _, w := range ops {
		s, ok := a.literal(w)
		if !ok {
			a.cwds = append(a.cwds, "")
			a.capCwds()
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
	a.capCwds()
}

// capCwds keeps the set of possible directories small: past maxCwds the
// directory is unknown (each cd could double the set).
func (a *analyzer) capCwds() {
	a.tick(len(a.cwds))
	if len(a.cwds) > maxCwds {
		a.cwds = []string{""}
	}
}

// shell handles bash/sh: -c STRING is analysed as a command, a script
// named task-manifest.sh is rewritten, any other script is unknown; a
// script read from stdin is unknown.
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
		if s == "-s" || s == "-" {
			break
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
	a.fromStdin("bash")
}

// fromStdin denies a program read from stdin (a here-document, a pipe)
// when the command mentions a managed path.
func (a *analyzer) fromStdin(base string) {
	if MightBeManaged(a.stdin) || a.srcManaged {
		a.writes = append(a.writes, Write{Op: base, Word: "(a program read from stdin)", Unsure: true})
	}
}

func (a *analyzer) nested(op, code string, depth int) {
	if depth >= maxDepth || !a.tick(len(code)/16) {
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
	rewrote, src, srcManaged := a.rewrote, a.src, a.srcManaged
	srcGitEnv := a.srcGitEnv
	a.setSrc(code)
	a.count(f)
	a.walk(f, depth+1)
	a.src, a.srcManaged, a.srcGitEnv = src, srcManaged, srcGitEnv
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
		if a.srcManaged {
			a.writes = append(a.writes, Write{Op: base + " " + path.Base(s), Word: "(paths from stdin)", Unsure: true})
		}
		return
	}
}

// unknown handles a command whose effect on its operands is unknown: it
// is taken to write every path it names (a managed file, or a directory
// holding some other than the project root), and any argument that
// mentions a managed path (inline code, --out=FILE) is denied. A program
// it may read from stdin is unknown too.
func (a *analyzer) unknown(base string, ops []*syntax.Word) {
	for _, w := range ops {
		t := a.resolve(w)
		n := len(a.writes)
		a.check(base, t, named)
		if len(a.writes) > n {
			a.writes[n].Unsure = true
			continue
		}
		if MightBeManaged(t.partial) || MightBeManaged(t.word) {
			a.writes = append(a.writes, Write{Op: base, Word: t.word, Unsure: true})
		}
	}
	if (interpreters[base] || strings.HasPrefix(base, "python")) && a.programFromStdin(ops) {
		a.fromStdin(base)
	}
}

// programFromStdin reports whether an interpreter reads its program from
// stdin: no inline code (-c, -e) and no script operand, or "-".
func (a *analyzer) programFromStdin(ops []*syntax.Word) bool {
	for _, w := range ops {
		s, ok := a.literal(w)
		switch {
		case s == "-":
			return true
		case !ok, !strings.HasPrefix(s, "-"):
			return false // a script
		case s == "-c" || s == "-e" || s == "-E" || s == "--eval" || s == "-r" || s == "-m" ||
			(len(s) > 2 && !strings.HasPrefix(s, "--") && strings.ContainsAny(s[len(s)-1:], "ce")):
			return false // inline code, a module
		}
	}
	return true
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
