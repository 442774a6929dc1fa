package claude

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Sandbox is what `hook install --claude` asks of Claude Code's sandbox
// (the settings' sandbox block, enforced by bubblewrap on Linux and
// Seatbelt on macOS, for every Bash command and its children) and of its
// file tools (permissions.deny): paths in the settings' syntax (`./x`
// relative to the session's directory, `~/x` in the home directory, `//x`
// absolute).
type Sandbox struct {
	// DenyWrite are the paths no sandboxed command may write: the
	// custodian's files and the settings that configure the sandbox.
	DenyWrite []string
	// Files are those of DenyWrite that are files (the others are
	// directories: their deny rules cover what is under them).
	Files []string
	// DenyRead are the paths no sandboxed command may read: the human's
	// admin credentials.
	DenyRead []string
	// Sockets are the unix sockets the CLI reaches the daemon on.
	Sockets []string
	// Off leaves the sandbox block out (--no-sandbox): only the file
	// tools' deny rules are written.
	Off bool
}

// The sandbox's switches install sets, by path in the settings: each
// must end with this value. A user's setting of another value is a
// conflict (the install is refused, the file left as it is).
var sandboxSwitches = []struct {
	path  []string
	value string
	why   string
}{
	{[]string{"enabled"}, "true", "the agent's commands must run in the sandbox"},
	{[]string{"failIfUnavailable"}, "true", "a sandbox that cannot start must stop the commands, not let them run unsandboxed"},
	{[]string{"allowUnsandboxedCommands"}, "false", "an agent must not be able to ask for a command outside the sandbox"},
	// Linux's sandbox filters unix sockets with seccomp, which cannot
	// tell one path from another: reaching the daemon's socket needs
	// them all (macOS honours allowUnixSockets alone).
	{[]string{"network", "allowAllUnixSockets"}, "true", "the CLI reaches the daemon on its unix socket (Linux's sandbox cannot allow one socket by path)"},
}

// editTools are the file tools whose permissions.deny rules install adds.
var editTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

// DenyRules are the permissions.deny rules of the file tools for sb's
// DenyWrite paths.
func (sb Sandbox) DenyRules() []string {
	var out []string
	for _, p := range sb.DenyWrite {
		if !slices.Contains(sb.Files, p) {
			p = strings.TrimSuffix(p, "/") + "/**"
		}
		for _, t := range editTools {
			out = append(out, t+"("+p+")")
		}
	}
	return out
}

// lists are the string arrays install merges, by path in the settings.
func (sb Sandbox) lists() []struct {
	path []string
	add  []string
} {
	l := []struct {
		path []string
		add  []string
	}{{[]string{"permissions", "deny"}, sb.DenyRules()}}
	if !sb.Off {
		l = append(l, []struct {
			path []string
			add  []string
		}{
			{[]string{"sandbox", "filesystem", "denyWrite"}, sb.DenyWrite},
			{[]string{"sandbox", "filesystem", "denyRead"}, sb.DenyRead},
			{[]string{"sandbox", "network", "allowUnixSockets"}, sb.Sockets},
		}...)
	}
	return l
}

// MergeSandbox returns settings with sb's sandbox block and deny rules
// merged in: the user's entries are kept, each list gains the entries it
// lacks, in order, and the switches are set. A user's switch of another
// value (the sandbox turned off, unsandboxed commands allowed) is an
// error naming it: the file must be left as it is.
func MergeSandbox(settings []byte, sb Sandbox) ([]byte, error) {
	top, err := parseObject(settings)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	if !sb.Off {
		for _, s := range sandboxSwitches {
			p := append([]string{"sandbox"}, s.path...)
			if v, ok, err := lookup(top, p); err != nil {
				return nil, err
			} else if ok && !jsonEqual(v, jsontext.Value(s.value)) {
				return nil, fmt.Errorf("settings.%s is %s: the custodian needs %s (%s); change it, or install with --no-sandbox", strings.Join(p, "."), v, s.value, s.why)
			}
			if top, err = setPath(top, p, func(jsontext.Value) (jsontext.Value, error) { return jsontext.Value(s.value), nil }); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range sb.lists() {
		if top, err = setPath(top, l.path, func(cur jsontext.Value) (jsontext.Value, error) {
			have, err := stringList(cur, l.path)
			if err != nil {
				return nil, err
			}
			for _, a := range l.add {
				if !slices.Contains(have, a) {
					have = append(have, a)
				}
			}
			return stringsValue(have), nil
		}); err != nil {
			return nil, err
		}
	}
	return format(top)
}

// RemoveSandbox removes what MergeSandbox added from settings: sb's entries
// from each list, the switches that orig (the file before the install;
// nil when there was none) did not have, and the objects and lists left
// empty by that which orig did not have either.
func RemoveSandbox(settings, orig []byte, sb Sandbox) ([]byte, error) {
	top, err := parseObject(settings)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	before, err := parseObject(orig)
	if err != nil {
		before = object{}
	}
	had := func(p []string) bool { _, ok, _ := lookup(before, p); return ok }
	for _, l := range sb.lists() {
		cur, ok, err := lookup(top, l.path)
		if err != nil || !ok {
			continue
		}
		have, err := stringList(cur, l.path)
		if err != nil {
			continue
		}
		have = slices.DeleteFunc(have, func(s string) bool { return slices.Contains(l.add, s) })
		if len(have) == 0 && !had(l.path) {
			top = delPath(top, l.path, had)
		} else {
			top, _ = setPath(top, l.path, func(jsontext.Value) (jsontext.Value, error) { return stringsValue(have), nil })
		}
	}
	if !sb.Off {
		for _, s := range sandboxSwitches {
			p := append([]string{"sandbox"}, s.path...)
			if !had(p) {
				top = delPath(top, p, had)
			}
		}
	}
	return format(top)
}

// lookup returns the value at path in o.
func lookup(o object, path []string) (jsontext.Value, bool, error) {
	v, ok := o.get(path[0])
	if !ok || len(path) == 1 {
		return v, ok, nil
	}
	inner, err := parseObject(v)
	if err != nil {
		return nil, false, fmt.Errorf("settings.%s: %w", path[0], err)
	}
	return lookup(inner, path[1:])
}

// setPath replaces the value at path in o with f(current) (nil current
// when absent), creating the objects on the way.
func setPath(o object, path []string, f func(jsontext.Value) (jsontext.Value, error)) (object, error) {
	cur, _ := o.get(path[0])
	if len(path) == 1 {
		v, err := f(cur)
		if err != nil {
			return nil, err
		}
		return o.set(path[0], v), nil
	}
	inner := object{}
	if cur != nil {
		var err error
		if inner, err = parseObject(cur); err != nil {
			return nil, fmt.Errorf("settings.%s: %w", path[0], err)
		}
	}
	inner, err := setPath(inner, path[1:], f)
	if err != nil {
		return nil, err
	}
	return o.set(path[0], inner.value()), nil
}

// delPath removes the value at path, and the objects it leaves empty that
// had (the original file) did not have.
func delPath(o object, path []string, had func([]string) bool) object {
	return delAt(o, path, nil, had)
}

func delAt(o object, path, prefix []string, had func([]string) bool) object {
	if len(path) == 1 {
		return o.del(path[0])
	}
	cur, ok := o.get(path[0])
	if !ok {
		return o
	}
	inner, err := parseObject(cur)
	if err != nil {
		return o
	}
	here := append(slices.Clone(prefix), path[0])
	inner = delAt(inner, path[1:], here, had)
	if len(inner) == 0 && !had(here) {
		return o.del(path[0])
	}
	return o.set(path[0], inner.value())
}

// stringList reads a list of strings (nil: none).
func stringList(v jsontext.Value, path []string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	elems, err := parseArray(v)
	if err != nil {
		return nil, fmt.Errorf("settings.%s: %w", strings.Join(path, "."), err)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if err := jsonUnquote(e, &s); err != nil {
			return nil, fmt.Errorf("settings.%s: an entry is not a string: %s", strings.Join(path, "."), e)
		}
		out = append(out, s)
	}
	return out, nil
}

func stringsValue(ss []string) jsontext.Value {
	vs := make([]jsontext.Value, len(ss))
	for i, s := range ss {
		vs[i] = quote(s)
	}
	return arrayValue(vs)
}

func jsonEqual(a, b jsontext.Value) bool {
	a, b = a.Clone(), b.Clone()
	return a.Compact() == nil && b.Compact() == nil && bytes.Equal(a, b)
}

// HasHook reports whether settings hold this hook's entry.
func HasHook(settings []byte) bool {
	_, changed, err := RemoveHooks(settings)
	return err == nil && changed
}
