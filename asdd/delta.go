package asdd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodian-dev/custodian/reason"
)

// Encoded is a manifest together with its compact JSON encoding and the
// encoding of each slice, so that the next manifest an operation produces
// (Apply shares every slice and heartbeat it did not change with its input)
// is encoded, validated and diffed by looking only at what changed. The
// daemon keeps the latest one in memory. An Encoded is never changed once
// made, so it may be shared between goroutines.
type Encoded struct {
	Manifest *Manifest
	// Raw is the compact JSON of Manifest: byte for byte json.Marshal's.
	Raw    []byte
	slices [][]byte // compact JSON of Manifest.Slices[i]
	head   []byte   // `{"project_context":…,"slices":[`
}

// NewEncoded encodes m in full (every slice). It does not validate m: use
// it on a manifest that came from Decode or passed Encode.
func NewEncoded(m *Manifest) (*Encoded, error) {
	e := &Encoded{Manifest: m, slices: make([][]byte, len(m.Slices))}
	for i, s := range m.Slices {
		if s == nil {
			return nil, reason.New(reason.InvalidInput, "manifest: slices[%d] is null", i)
		}
		b, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("encode manifest: slice %s: %w", s.SliceID, err)
		}
		e.slices[i] = b
	}
	if err := e.assemble(); err != nil {
		return nil, err
	}
	return e, nil
}

// assemble builds Raw from the slice encodings and the small members.
func (e *Encoded) assemble() error {
	m := e.Manifest
	pc, err := json.Marshal(m.ProjectContext)
	if err != nil {
		return fmt.Errorf("encode manifest: project_context: %w", err)
	}
	hbs := m.AgentHeartbeats
	if hbs == nil {
		hbs = map[string]*Heartbeat{}
	}
	hb, err := json.Marshal(hbs)
	if err != nil {
		return fmt.Errorf("encode manifest: agent_heartbeats: %w", err)
	}
	n := len(pc) + len(hb) + 128
	for _, s := range e.slices {
		n += len(s) + 1
	}
	var buf bytes.Buffer
	buf.Grow(n)
	buf.WriteString(`{"project_context":`)
	buf.Write(pc)
	buf.WriteString(`,"slices":[`)
	offs := make([]int, len(e.slices))
	for i, s := range e.slices {
		if i > 0 {
			buf.WriteByte(',')
		}
		offs[i] = buf.Len()
		buf.Write(s)
	}
	buf.WriteString(`],"agent_heartbeats":`)
	buf.Write(hb)
	buf.WriteString(`,"revision":`)
	buf.WriteString(strconv.FormatUint(m.Revision, 10))
	if len(m.Extra) > 0 {
		keys := slices.Sorted(maps.Keys(m.Extra))
		for _, k := range keys {
			kb, err := json.Marshal(k)
			if err != nil {
				return fmt.Errorf("encode manifest: %w", err)
			}
			buf.WriteByte(',')
			buf.Write(kb)
			buf.WriteByte(':')
			if err := json.Compact(&buf, m.Extra[k]); err != nil {
				return fmt.Errorf("encode manifest: unknown member %q holds invalid JSON: %w", k, err)
			}
		}
	}
	buf.WriteByte('}')
	e.Raw = buf.Bytes()
	// Each slice's encoding is kept as the part of Raw that holds it, so
	// the manifest's bytes are in memory once.
	for i, s := range e.slices {
		e.slices[i] = e.Raw[offs[i] : offs[i]+len(s) : offs[i]+len(s)]
	}
	return nil
}

// Next encodes next, a manifest Apply made from e.Manifest, re-encoding
// only the slices, heartbeats and members whose values are not shared with
// e.Manifest, and checks those against the manifest schema (the rest passed
// when e was made). It returns next encoded and the RFC 6902 patch from
// e.Raw to its Raw. When next does not share its structure with e.Manifest
// the way Apply's output does, it falls back to the full path: the whole
// manifest is encoded and validated, and the patch is nil (the caller diffs).
func (e *Encoded) Next(next *Manifest) (*Encoded, json.RawMessage, error) {
	prev := e.Manifest
	if len(next.Slices) < len(prev.Slices) || !sameMap(prev.Extra, next.Extra) {
		return fullEncoded(next)
	}
	ne := &Encoded{Manifest: next, slices: make([][]byte, len(next.Slices))}
	var ops []patchOp
	var added []int
	for i, s := range next.Slices {
		if s == nil {
			return nil, nil, reason.New(reason.InvalidInput, "encoded manifest fails its schema: slices[%d] is null", i)
		}
		if i < len(prev.Slices) && s == prev.Slices[i] {
			ne.slices[i] = e.slices[i]
			continue
		}
		b, err := json.Marshal(s)
		if err != nil {
			return nil, nil, fmt.Errorf("encode manifest: slice %s: %w", s.SliceID, err)
		}
		if err := validatePart(partSlice, b, "/slices/"+strconv.Itoa(i)); err != nil {
			return nil, nil, err
		}
		ne.slices[i] = b
		op := "replace"
		if i >= len(prev.Slices) {
			op = "add"
			added = append(added, i)
		}
		ops = append(ops, patchOp{Op: op, Path: "/slices/" + strconv.Itoa(i), Value: b})
	}
	if len(added) > 0 {
		seen := make(map[string]bool, len(next.Slices))
		for i, s := range next.Slices {
			if seen[s.SliceID] {
				return nil, nil, reason.New(reason.InvalidInput, "encoded manifest fails its schema: slices[%d]: duplicate slice_id %q", i, s.SliceID)
			}
			seen[s.SliceID] = true
		}
	}
	pcPrev, err := json.Marshal(prev.ProjectContext)
	if err != nil {
		return nil, nil, fmt.Errorf("encode manifest: project_context: %w", err)
	}
	pcNext, err := json.Marshal(next.ProjectContext)
	if err != nil {
		return nil, nil, fmt.Errorf("encode manifest: project_context: %w", err)
	}
	if !bytes.Equal(pcPrev, pcNext) {
		if err := validatePart(partContext, pcNext, "/project_context"); err != nil {
			return nil, nil, err
		}
		ops = append(ops, patchOp{Op: "replace", Path: "/project_context", Value: pcNext})
	}
	keys := slices.Sorted(maps.Keys(next.AgentHeartbeats))
	for _, k := range keys {
		h := next.AgentHeartbeats[k]
		if h == nil {
			return nil, nil, reason.New(reason.InvalidInput, "encoded manifest fails its schema: agent_heartbeats.%s is null", k)
		}
		if old, ok := prev.AgentHeartbeats[k]; ok && old == h {
			continue
		}
		b, err := json.Marshal(h)
		if err != nil {
			return nil, nil, fmt.Errorf("encode manifest: heartbeat %s: %w", k, err)
		}
		if err := validatePart(partHeartbeat, b, "/agent_heartbeats/"+k); err != nil {
			return nil, nil, err
		}
		ops = append(ops, patchOp{Op: "add", Path: "/agent_heartbeats/" + escapePointer(k), Value: b})
	}
	for _, k := range slices.Sorted(maps.Keys(prev.AgentHeartbeats)) {
		if _, ok := next.AgentHeartbeats[k]; !ok {
			ops = append(ops, patchOp{Op: "remove", Path: "/agent_heartbeats/" + escapePointer(k)})
		}
	}
	if next.Revision != prev.Revision {
		ops = append(ops, patchOp{Op: "replace", Path: "/revision", Value: json.RawMessage(strconv.FormatUint(next.Revision, 10))})
	}
	if err := ne.assemble(); err != nil {
		return nil, nil, err
	}
	if len(ops) == 0 {
		return ne, json.RawMessage("[]"), nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, nil, fmt.Errorf("encode patch: %w", err)
	}
	return ne, patch, nil
}

// fullEncoded is Next's fallback: everything encoded and validated.
func fullEncoded(m *Manifest) (*Encoded, json.RawMessage, error) {
	e, err := NewEncoded(m)
	if err != nil {
		return nil, nil, err
	}
	if err := Validate(e.Raw); err != nil {
		return nil, nil, fmt.Errorf("encoded manifest fails its schema: %w", err)
	}
	return e, nil, nil
}

// Slice returns the compact JSON of slice i, as in Raw.
func (e *Encoded) Slice(i int) []byte { return e.slices[i] }

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sameMap(a, b Extra) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Parts of the manifest schema compiled on their own.
const (
	partSlice     = "#/$defs/slice"
	partHeartbeat = "#/$defs/heartbeat"
	partContext   = "#/properties/project_context"
)

var (
	partsOnce sync.Once
	parts     map[string]*jsonschema.Schema
	partsErr  error
)

func compiledParts() (map[string]*jsonschema.Schema, error) {
	partsOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
		if err != nil {
			partsErr = fmt.Errorf("embedded schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		const url = "asdd-manifest.json"
		if err := c.AddResource(url, doc); err != nil {
			partsErr = fmt.Errorf("embedded schema: %w", err)
			return
		}
		parts = map[string]*jsonschema.Schema{}
		for _, p := range []string{partSlice, partHeartbeat, partContext} {
			s, err := c.Compile(url + p)
			if err != nil {
				partsErr = fmt.Errorf("embedded schema %s: %w", p, err)
				return
			}
			parts[p] = s
		}
	})
	return parts, partsErr
}

// validatePart checks raw, the member of the manifest at pointer at,
// against its part of the schema.
func validatePart(part string, raw []byte, at string) error {
	ps, err := compiledParts()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return reason.New(reason.InvalidInput, "encoded manifest fails its schema: %s is not valid JSON: %v", at, err)
	}
	if err := ps[part].Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return reason.New(reason.InvalidInput, "encoded manifest fails its schema: manifest does not match its schema: %s", describeAt(ve, at))
		}
		return reason.New(reason.InvalidInput, "encoded manifest fails its schema: manifest does not match its schema: at %s: %v", at, err)
	}
	return nil
}

// describeAt is describe for a member validated on its own at pointer at.
func describeAt(ve *jsonschema.ValidationError, at string) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := at
			if len(e.InstanceLocation) > 0 {
				loc += "/" + strings.Join(e.InstanceLocation, "/")
			}
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 3 {
		leaves = append(leaves[:3], fmt.Sprintf("and %d more", len(leaves)-3))
	}
	return strings.Join(leaves, "; ")
}
