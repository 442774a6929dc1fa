package claude

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Command is the hook command written into settings when no binary is
// named: `custodian` found on PATH.
const Command = "custodian hook claude"

// FastBinary is the small binary that answers as Command does
// (cmd/custodian-hook); hook install uses it when it is on PATH.
const FastBinary = "custodian-hook"

// Matcher is the PreToolUse matcher of the hook entry: the tools that can
// write a file.
const Matcher = "Write|Edit|MultiEdit|NotebookEdit|Bash"

// Events are the hook events the hook answers, with their matcher ("" for
// none).
var Events = []struct{ Name, Matcher string }{{"PreToolUse", Matcher}, {"SessionStart", ""}}

// member is one member of a JSON object, in document order.
type member struct {
	Name  string
	Value jsontext.Value
}

// object is a JSON object that keeps its members' order and raw values.
type object []member

func parseObject(b []byte) (object, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return object{}, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var o object
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		o = append(o, member{name, v.Clone()})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("data after the top-level object")
	}
	return o, nil
}

func (o object) get(name string) (jsontext.Value, bool) {
	for _, m := range o {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// set replaces the member's value in place, or appends it.
func (o object) set(name string, v jsontext.Value) object {
	for i := range o {
		if o[i].Name == name {
			o[i].Value = v
			return o
		}
	}
	return append(o, member{name, v})
}

func (o object) del(name string) object {
	out := o[:0]
	for _, m := range o {
		if m.Name != name {
			out = append(out, m)
		}
	}
	return out
}

func (o object) value() jsontext.Value {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := jsontext.AppendQuote(nil, m.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return jsontext.Value(b.Bytes())
}

func parseArray(v jsontext.Value) ([]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '[' {
		return nil, fmt.Errorf("not a JSON array")
	}
	var out []jsontext.Value
	for dec.PeekKind() != ']' {
		e, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, e.Clone())
	}
	return out, nil
}

func arrayValue(vs []jsontext.Value) jsontext.Value {
	return jsontext.Value("[" + string(bytes.Join(func() [][]byte {
		bs := make([][]byte, len(vs))
		for i, v := range vs {
			bs[i] = v
		}
		return bs
	}(), []byte(","))) + "]")
}

func format(o object) ([]byte, error) {
	v := o.value()
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		return nil, err
	}
	return append(v, '\n'), nil
}

func quote(s string) jsontext.Value {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}

// ErrNotObject is returned for a settings file that is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// isOurs reports whether a hook command is this hook (any custodian binary
// running `hook claude`).
func isOurs(command string) bool {
	f := strings.Fields(command)
	return len(f) >= 3 && (filepath.Base(strings.Trim(f[0], `'"`)) == "custodian" || filepath.Base(strings.Trim(f[0], `'"`)) == "custodian-hook") && f[len(f)-2] == "hook" && f[len(f)-1] == "claude"
}

// group is a matcher group of settings.hooks.<Event>.
type group struct {
	Matcher string
	Hooks   []jsontext.Value
	obj     object
}

func parseGroup(v jsontext.Value) (group, error) {
	o, err := parseObject(v)
	if err != nil {
		return group{}, err
	}
	g := group{obj: o}
	if m, ok := o.get("matcher"); ok {
		var s string
		if err := jsonUnquote(m, &s); err == nil {
			g.Matcher = s
		}
	}
	if h, ok := o.get("hooks"); ok {
		if g.Hooks, err = parseArray(h); err != nil {
			return group{}, fmt.Errorf("hooks: %w", err)
		}
	}
	return g, nil
}

func jsonUnquote(v jsontext.Value, s *string) error {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '"' {
		return fmt.Errorf("not a string")
	}
	*s = tok.String()
	return nil
}

func hookCommand(h jsontext.Value) string {
	o, err := parseObject(h)
	if err != nil {
		return ""
	}
	v, ok := o.get("command")
	if !ok {
		return ""
	}
	var s string
	if jsonUnquote(v, &s) != nil {
		return ""
	}
	return s
}

// MergeHooks returns settings (a settings.json's bytes; empty for none)
// with the hook's entries for every event in Events: an existing entry of
// this hook is updated in place, other keys and hooks are kept in their
// order. command is the hook command (Command by default).
func MergeHooks(settings []byte, command string) ([]byte, error) {
	return MergeHooksFor(settings, command, command)
}

// MergeHooksFor is MergeHooks with the SessionStart entry running session
// instead of command: the full custodian binary, which starts the daemon
// the sandboxed CLI sends its changes to, where the PreToolUse entry runs
// the small FastBinary.
func MergeHooksFor(settings []byte, command, session string) ([]byte, error) {
	top, err := parseObject(settings)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	hooksV, _ := top.get("hooks")
	hooks := object{}
	if hooksV != nil {
		if hooks, err = parseObject(hooksV); err != nil {
			return nil, fmt.Errorf("settings.hooks: %w", err)
		}
	}
	for _, ev := range Events {
		var groups []jsontext.Value
		if v, ok := hooks.get(ev.Name); ok {
			if groups, err = parseArray(v); err != nil {
				return nil, fmt.Errorf("settings.hooks.%s: %w", ev.Name, err)
			}
		}
		entry := object{}
		if ev.Matcher != "" {
			entry = entry.set("matcher", quote(ev.Matcher))
		}
		timeout := jsontext.Value("10")
		c := command
		if ev.Name == "SessionStart" {
			c = session
		}
		h := object{{"type", quote("command")}, {"command", quote(c)}, {"timeout", timeout}}
		entry = entry.set("hooks", arrayValue([]jsontext.Value{h.value()}))
		placed := false
		var out []jsontext.Value
		for _, gv := range groups {
			g, err := parseGroup(gv)
			if err != nil {
				out = append(out, gv)
				continue
			}
			var kept []jsontext.Value
			ours := false
			for _, hv := range g.Hooks {
				if isOurs(hookCommand(hv)) {
					ours = true
					continue
				}
				kept = append(kept, hv)
			}
			switch {
			case !ours:
				out = append(out, gv)
			case len(kept) == 0 && !placed:
				out = append(out, entry.value()) // our group, rewritten in place
				placed = true
			case len(kept) > 0:
				g.obj = g.obj.set("hooks", arrayValue(kept))
				out = append(out, g.obj.value())
			}
		}
		if !placed {
			out = append(out, entry.value())
		}
		hooks = hooks.set(ev.Name, arrayValue(out))
	}
	top = top.set("hooks", hooks.value())
	return format(top)
}

// RemoveHooks removes this hook's entries from settings; a group, an event
// or the hooks object left empty by the removal goes too.
func RemoveHooks(settings []byte) ([]byte, bool, error) {
	top, err := parseObject(settings)
	if err != nil {
		return nil, false, fmt.Errorf("settings: %w", err)
	}
	hooksV, ok := top.get("hooks")
	if !ok {
		return settings, false, nil
	}
	hooks, err := parseObject(hooksV)
	if err != nil {
		return nil, false, fmt.Errorf("settings.hooks: %w", err)
	}
	changed := false
	for _, ev := range Events {
		v, ok := hooks.get(ev.Name)
		if !ok {
			continue
		}
		groups, err := parseArray(v)
		if err != nil {
			return nil, false, fmt.Errorf("settings.hooks.%s: %w", ev.Name, err)
		}
		var out []jsontext.Value
		for _, gv := range groups {
			g, err := parseGroup(gv)
			if err != nil {
				out = append(out, gv)
				continue
			}
			var kept []jsontext.Value
			for _, hv := range g.Hooks {
				if !isOurs(hookCommand(hv)) {
					kept = append(kept, hv)
				}
			}
			switch {
			case len(kept) == len(g.Hooks):
				out = append(out, gv)
			case len(kept) > 0:
				g.obj = g.obj.set("hooks", arrayValue(kept))
				out = append(out, g.obj.value())
				changed = true
			default:
				changed = true
			}
		}
		if len(out) == 0 {
			hooks = hooks.del(ev.Name)
		} else {
			hooks = hooks.set(ev.Name, arrayValue(out))
		}
	}
	if !changed {
		return settings, false, nil
	}
	if len(hooks) == 0 {
		top = top.del("hooks")
	} else {
		top = top.set("hooks", hooks.value())
	}
	b, err := format(top)
	return b, true, err
}

// MCPServer is the .mcp.json entry of the custodian's MCP server.
const MCPServer = `{"command":"custodian","args":["mcp"]}`

// MergeMCP adds (or updates) mcpServers.custodian in an .mcp.json.
func MergeMCP(b []byte) ([]byte, error) {
	top, err := parseObject(b)
	if err != nil {
		return nil, fmt.Errorf(".mcp.json: %w", err)
	}
	servers := object{}
	if v, ok := top.get("mcpServers"); ok {
		if servers, err = parseObject(v); err != nil {
			return nil, fmt.Errorf(".mcp.json mcpServers: %w", err)
		}
	}
	servers = servers.set("custodian", jsontext.Value(MCPServer))
	top = top.set("mcpServers", servers.value())
	return format(top)
}

// RemoveMCP removes mcpServers.custodian when it is the entry MergeMCP
// writes (a hand-written server of that name is left alone).
func RemoveMCP(b []byte) ([]byte, bool, error) {
	top, err := parseObject(b)
	if err != nil {
		return nil, false, fmt.Errorf(".mcp.json: %w", err)
	}
	v, ok := top.get("mcpServers")
	if !ok {
		return b, false, nil
	}
	servers, err := parseObject(v)
	if err != nil {
		return nil, false, fmt.Errorf(".mcp.json mcpServers: %w", err)
	}
	cur, ok := servers.get("custodian")
	if !ok {
		return b, false, nil
	}
	c1, c2 := cur.Clone(), jsontext.Value(MCPServer)
	if c1.Compact() != nil || c2.Compact() != nil || !bytes.Equal(c1, c2) {
		return b, false, nil
	}
	servers = servers.del("custodian")
	if len(servers) == 0 {
		top = top.del("mcpServers")
	} else {
		top = top.set("mcpServers", servers.value())
	}
	out, err := format(top)
	return out, true, err
}

// WriteFileAtomic writes b to path durably (internal/atomicfile); an
// existing file keeps its permissions, a new one gets perm.
func WriteFileAtomic(path string, b []byte, perm os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return atomicfile.WritePath(path, b, perm)
}

// PluginFiles are the files of a Claude Code plugin that installs the hook
// and the MCP server (`custodian plugin export DIR`), by path in the plugin.
func PluginFiles(command string) (map[string][]byte, error) {
	manifest, err := format(object{
		{"name", quote("custodian")},
		{"description", quote("Custodian keeps the pipeline's state: denies direct writes of its files, rewrites task-manifest.sh to custodian impl, gives sessions the protocol, and connects the custodian MCP server.")},
		{"homepage", quote("https://github.com/custodian-dev/custodian")},
	})
	if err != nil {
		return nil, err
	}
	hooks, err := MergeHooks([]byte(`{"description":"Custodian: the only writer of the pipeline's state files"}`), command)
	if err != nil {
		return nil, err
	}
	mcp, err := MergeMCP(nil)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		".claude-plugin/plugin.json": manifest,
		"hooks/hooks.json":           hooks,
		".mcp.json":                  mcp,
	}, nil
}
