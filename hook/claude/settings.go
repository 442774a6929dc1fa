package claude

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// setOrDel sets o's member name to m, or removes it when m is empty.
func (o object) setOrDel(name string, m object) object {
	if len(m) == 0 {
		return o.del(name)
	}
	return o.set(name, m.value())
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
	top, hooks, _, err := parseMember(settings, "hooks", "settings", "settings.hooks")
	if err != nil {
		return nil, err
	}
	for _, ev := range Events {
		groups, err := eventGroups(hooks, ev.Name)
		if err != nil {
			return nil, err
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
		out, _, at := dropOurs(groups)
		if at < 0 {
			out = append(out, entry.value())
		} else {
			out = slices.Insert(out, at, entry.value()) // our group, rewritten in place
		}
		hooks = hooks.set(ev.Name, arrayValue(out))
	}
	return format(top.set("hooks", hooks.value()))
}

// RemoveHooks removes this hook's entries from settings; a group, an event
// or the hooks object left empty by the removal goes too.
func RemoveHooks(settings []byte) ([]byte, bool, error) {
	top, hooks, ok, err := parseMember(settings, "hooks", "settings", "settings.hooks")
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return settings, false, nil
	}
	changed := false
	for _, ev := range Events {
		if _, ok := hooks.get(ev.Name); !ok {
			continue
		}
		groups, err := eventGroups(hooks, ev.Name)
		if err != nil {
			return nil, false, err
		}
		out, removed, _ := dropOurs(groups)
		changed = changed || removed
		if len(out) == 0 {
			hooks = hooks.del(ev.Name)
		} else {
			hooks = hooks.set(ev.Name, arrayValue(out))
		}
	}
	if !changed {
		return settings, false, nil
	}
	b, err := format(top.setOrDel("hooks", hooks))
	return b, true, err
}

// parseMember parses b (empty for {}) as an object and its member name as
// an object (empty when missing; ok says it was there); what and whatMember
// name them in errors.
func parseMember(b []byte, name, what, whatMember string) (top, m object, ok bool, err error) {
	if top, err = parseObject(b); err != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", what, err)
	}
	v, ok := top.get(name)
	if !ok {
		return top, object{}, false, nil
	}
	if m, err = parseObject(v); err != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", whatMember, err)
	}
	return top, m, true, nil
}

// eventGroups parses the hook groups of an event (none when missing).
func eventGroups(hooks object, event string) ([]jsontext.Value, error) {
	v, ok := hooks.get(event)
	if !ok {
		return nil, nil
	}
	groups, err := parseArray(v)
	if err != nil {
		return nil, fmt.Errorf("settings.hooks.%s: %w", event, err)
	}
	return groups, nil
}

// dropOurs returns the hook groups without this hook's entries (a group
// left empty goes; one that does not parse stays), whether it removed any,
// and where in out the first group that held only this hook's stood (-1:
// none).
func dropOurs(groups []jsontext.Value) (out []jsontext.Value, removed bool, at int) {
	at = -1
	for _, gv := range groups {
		g, err := parseGroup(gv)
		if err != nil {
			out = append(out, gv)
			continue
		}
		var others []jsontext.Value
		for _, hv := range g.Hooks {
			if !isOurs(hookCommand(hv)) {
				others = append(others, hv)
			}
		}
		switch {
		case len(others) == len(g.Hooks):
			out = append(out, gv)
		case len(others) > 0:
			out = append(out, g.obj.set("hooks", arrayValue(others)).value())
			removed = true
		default:
			removed = true
			if at < 0 {
				at = len(out)
			}
		}
	}
	return out, removed, at
}

// MCPServer is the .mcp.json entry of the custodian's MCP server.
const MCPServer = `{"command":"custodian","args":["mcp"]}`

// MergeMCP adds (or updates) mcpServers.custodian in an .mcp.json.
func MergeMCP(b []byte) ([]byte, error) {
	top, servers, _, err := parseMember(b, "mcpServers", ".mcp.json", ".mcp.json mcpServers")
	if err != nil {
		return nil, err
	}
	return format(top.set("mcpServers", servers.set("custodian", jsontext.Value(MCPServer)).value()))
}

// RemoveMCP removes mcpServers.custodian when it is the entry MergeMCP
// writes (a hand-written server of that name is left alone).
func RemoveMCP(b []byte) ([]byte, bool, error) {
	top, servers, ok, err := parseMember(b, "mcpServers", ".mcp.json", ".mcp.json mcpServers")
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return b, false, nil
	}
	cur, ok := servers.get("custodian")
	if !ok {
		return b, false, nil
	}
	c1, c2 := cur.Clone(), jsontext.Value(MCPServer)
	if c1.Compact() != nil || c2.Compact() != nil || !bytes.Equal(c1, c2) {
		return b, false, nil
	}
	out, err := format(top.setOrDel("mcpServers", servers.del("custodian")))
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
