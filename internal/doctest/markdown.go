package doctest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Block is one fenced code block of a Markdown file.
type Block struct {
	File string   // the file, as given to Parse
	Line int      // the line of the opening fence (1-based)
	Lang string   // the info string's first word: sh, console, json… ("" when bare)
	Body []string // the lines between the fences, without the fence's indentation
	Do   Directives
}

// Directives are what a <!-- doctest: … --> comment just before the fence
// asks for.
type Directives struct {
	Skip        string        // why the block is not run ("" runs it)
	Daemon      bool          // run it while custodian serve runs
	Etcd        bool          // run it with an etcd server (one per file, kept for its later blocks)
	LongRunning bool          // each line starts a server that must stay up
	Exit        int           // the exit status an sh block must end with
	Timeout     time.Duration // 0: the default
}

// Runs reports whether the block is a shell example the test runs.
func (b *Block) Runs() bool { return (b.Lang == "sh" || b.Lang == "console") && b.Do.Skip == "" }

var (
	fenceRE     = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([^\\s`]*)")
	directiveRE = regexp.MustCompile(`^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$`)
)

// Parse returns the fenced blocks of a Markdown text; a directive that does
// not parse is an error naming its line.
func Parse(file, text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var blocks []Block
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, lang := m[1], m[2], m[3]
		b := Block{File: file, Line: i + 1, Lang: lang}
		if i > 0 {
			if d := directiveRE.FindStringSubmatch(lines[i-1]); d != nil {
				do, err := parseDirectives(d[1])
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", file, i, err)
				}
				b.Do = do
			}
		}
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, fence[:3]) && strings.Trim(t, fence[:1]) == "" && len(t) >= len(fence) {
				break
			}
			b.Body = append(b.Body, strings.TrimPrefix(lines[j], indent))
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fence is never closed", file, i+1)
		}
		blocks = append(blocks, b)
		i = j
	}
	return blocks, nil
}

func parseDirectives(s string) (Directives, error) {
	var d Directives
	parts := strings.Split(s, ";")
	for i, part := range parts {
		part = strings.TrimSpace(part)
		word, rest, _ := strings.Cut(part, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "skip":
			// The reason is the rest of the comment, ";" and all.
			rest = strings.TrimSpace(strings.Join(append([]string{rest}, parts[i+1:]...), ";"))
			if rest == "" {
				return d, fmt.Errorf("doctest: skip needs a reason")
			}
			d.Skip = rest
			return d, nil
		case "daemon":
			d.Daemon = true
		case "etcd":
			d.Etcd = true
		case "long-running":
			d.LongRunning = true
		case "exit":
			n, err := strconv.Atoi(rest)
			if err != nil {
				return d, fmt.Errorf("doctest: exit %q is not a number", rest)
			}
			d.Exit = n
		case "timeout":
			v, err := time.ParseDuration(rest)
			if err != nil {
				return d, fmt.Errorf("doctest: timeout %q: %w", rest, err)
			}
			d.Timeout = v
		default:
			return d, fmt.Errorf("doctest: unknown directive %q (skip REASON, daemon, etcd, long-running, exit N, timeout D)", part)
		}
	}
	return d, nil
}

// Command is one "$ " command of a console block and what it should print.
type Command struct {
	Line int    // its line in the file
	Text string // the command, continuation lines joined
	Want []string
	Exit int
}

var exitRE = regexp.MustCompile(`^\[exit (\d+)\]$`)

// Commands splits a console block into its commands.
func (b *Block) Commands() ([]Command, error) {
	var cmds []Command
	for i := 0; i < len(b.Body); i++ {
		line := b.Body[i]
		if strings.HasPrefix(line, "$ ") {
			c := Command{Line: b.Line + 1 + i, Text: strings.TrimPrefix(line, "$ ")}
			for strings.HasSuffix(c.Text, "\\") && i+1 < len(b.Body) {
				i++
				c.Text = strings.TrimSuffix(c.Text, "\\") + "\n" + b.Body[i]
			}
			cmds = append(cmds, c)
			continue
		}
		if len(cmds) == 0 {
			return nil, fmt.Errorf("%s:%d: a console block starts with a command (\"$ …\")", b.File, b.Line+1+i)
		}
		c := &cmds[len(cmds)-1]
		if m := exitRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			c.Exit, _ = strconv.Atoi(m[1])
			continue
		}
		c.Want = append(c.Want, line)
	}
	return cmds, nil
}

// Match reports whether got (output lines) matches want, where "…" matches
// any text within a line and a line of only "…" any number of lines.
func Match(want, got []string) bool {
	want, got = trimLines(want), trimLines(got)
	var match func(w, g int) bool
	memo := map[[2]int]bool{}
	seen := map[[2]int]bool{}
	match = func(w, g int) bool {
		k := [2]int{w, g}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		var r bool
		switch {
		case w == len(want):
			r = g == len(got)
		case want[w] == "…":
			r = match(w+1, g) || (g < len(got) && match(w, g+1))
		default:
			r = g < len(got) && lineMatch(want[w], got[g]) && match(w+1, g+1)
		}
		memo[k] = r
		return r
	}
	return match(0, 0)
}

func lineMatch(want, got string) bool {
	if !strings.Contains(want, "…") {
		return want == got
	}
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got)
}

// trimLines drops trailing spaces and trailing empty lines.
func trimLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimRight(l, " \t\r")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

var indentedCommandRE = regexp.MustCompile(`^( {4,}|\t)(\$ )?(custodian|curl|go|git) `)

// IndentedCommands returns the lines (1-based) of shell commands written as
// an indented code block outside any fence: such an example would escape
// the test, so it is reported.
func IndentedCommands(text string) []int {
	var lines []int
	inFence, prevBlank := false, true
	for i, l := range strings.Split(text, "\n") {
		if fenceRE.MatchString(l) {
			inFence = !inFence
			prevBlank = false
			continue
		}
		if !inFence && indentedCommandRE.MatchString(l) && (prevBlank || len(lines) > 0 && lines[len(lines)-1] == i) {
			lines = append(lines, i+1)
		}
		prevBlank = strings.TrimSpace(l) == ""
	}
	return lines
}
