package asdd

import (
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/custodian-dev/custodian/reason"
)

// Schema is the JSON Schema (draft 2020-12) of the manifest, as printed by
// `custodian schema asdd`.
//
//go:embed schema.json
var Schema []byte

// Parts of the manifest schema validated on their own.
const (
	partWhole     = ""
	partSlice     = "#/$defs/slice"
	partHeartbeat = "#/$defs/heartbeat"
	partContext   = "#/properties/project_context"
)

// schemaSet is the manifest schema resolved for validation, whole and in
// the parts validated on their own. It is made on first use, never at
// package initialisation, so a command that validates no manifest does
// not pay for it; and the validator (github.com/google/jsonschema-go)
// compiles no meta-schemas of its own at start either.
type schemaSet struct {
	tree map[string]any // the schema as generic JSON, to find where a value fails
	// parts are the validators of the whole schema and of each part, each
	// resolved on first use: a command that reads a manifest needs the
	// whole and the slice, one that writes a heartbeat perhaps only that.
	parts map[string]func() (*jsonschema.Resolved, error)

	mu       sync.Mutex
	resolved map[string]*jsonschema.Resolved // sub-schemas by their JSON, for locate
}

// contextDef is the name under which the project context's schema joins
// the definitions in its own validator.
const contextDef = "custodian:project_context"

var compiledSchema = sync.OnceValues(func() (*schemaSet, error) {
	ss := &schemaSet{resolved: map[string]*jsonschema.Resolved{}}
	if err := json.Unmarshal(Schema, &ss.tree); err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(Schema, &root); err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	// A part is validated by a schema that refers to it among the
	// definitions (the project context joins them), so that the
	// definitions are unmarshalled once and shared.
	defs := maps.Clone(root.Defs)
	defs[contextDef] = root.Properties["project_context"]
	part := func(name string, s *jsonschema.Schema) func() (*jsonschema.Resolved, error) {
		return sync.OnceValues(func() (*jsonschema.Resolved, error) {
			r, err := s.Resolve(nil)
			if err != nil {
				return nil, fmt.Errorf("embedded schema %s: %w", name, err)
			}
			return r, nil
		})
	}
	ref := func(def string) *jsonschema.Schema {
		return &jsonschema.Schema{Schema: root.Schema, Defs: defs, Ref: "#/$defs/" + def}
	}
	ss.parts = map[string]func() (*jsonschema.Resolved, error){
		partWhole:     part("", &root),
		partSlice:     part(partSlice, ref("slice")),
		partHeartbeat: part(partHeartbeat, ref("heartbeat")),
		partContext:   part(partContext, ref(contextDef)),
	}
	return ss, nil
})

// node returns the sub-schema at a reference within the schema ("" for the
// whole).
func (ss *schemaSet) node(ref string) map[string]any {
	var n any = ss.tree
	if ref = strings.TrimPrefix(ref, "#/"); ref != "" {
		for _, k := range strings.Split(ref, "/") {
			m, _ := n.(map[string]any)
			n = m[k]
		}
	}
	m, _ := n.(map[string]any)
	return m
}

// resolve makes n, the schema or one of its sub-schemas (as generic JSON),
// a validator of its own: the schema's definitions go with it, so that its
// references resolve.
func (ss *schemaSet) resolve(n map[string]any) (*jsonschema.Resolved, error) {
	if n == nil {
		return nil, errors.New("no such schema")
	}
	w := maps.Clone(n)
	delete(w, "$id") // resolved on its own, not as the published document
	w["$schema"] = ss.tree["$schema"]
	w["$defs"] = ss.tree["$defs"]
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// resolveCached is resolve, once per distinct sub-schema.
func (ss *schemaSet) resolveCached(n map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if r, ok := ss.resolved[string(b)]; ok {
		return r, nil
	}
	r, err := ss.resolve(n)
	if err != nil {
		return nil, err
	}
	ss.resolved[string(b)] = r
	return r, nil
}

// validateValue checks v, the member of the manifest at pointer at,
// against a part of the schema. A violation is an INVALID_INPUT error
// naming the innermost member that fails and why.
func (ss *schemaSet) validateValue(part string, v any, at string) error {
	msg, err := ss.check(part, v, at)
	if err != nil {
		return err
	}
	if msg != "" {
		return reason.New(reason.InvalidInput, "%s", msg)
	}
	return nil
}

// check is validateValue's reason, "" when v passes; the error is the
// schema's own (it does not resolve).
func (ss *schemaSet) check(part string, v any, at string) (string, error) {
	r, err := ss.parts[part]()
	if err != nil {
		return "", err
	}
	if err = r.Validate(v); err == nil {
		return "", nil
	}
	where, why := ss.locate(ss.node(part), v, at, err)
	return fmt.Sprintf("manifest does not match its schema: at %s: %s", where, why), nil
}

// locate finds, for a value v (at pointer at) that fails the sub-schema
// node with err, the innermost member that fails its own sub-schema, and
// says why in the validator's words for that member. Only a value that
// fails takes this path.
func (ss *schemaSet) locate(node map[string]any, v any, at string, err error) (string, string) {
	for range 16 { // a chain of references, not a loop
		ref, ok := node["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			break
		}
		node = ss.node(ref)
	}
	inner := func(sub any, cv any, cat string) (string, string, bool) {
		n, ok := sub.(map[string]any)
		if !ok {
			return "", "", false
		}
		r, rerr := ss.resolveCached(n)
		if rerr != nil {
			return "", "", false
		}
		if cerr := r.Validate(cv); cerr != nil {
			w, why := ss.locate(n, cv, cat, cerr)
			return w, why, true
		}
		return "", "", false
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := node["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			sub, ok := props[k]
			if !ok {
				sub = node["additionalProperties"]
			}
			if w, why, ok := inner(sub, x[k], at+"/"+pointerToken(k)); ok {
				return w, why
			}
		}
	case []any:
		for i, item := range x {
			if w, why, ok := inner(node["items"], item, at+"/"+strconv.Itoa(i)); ok {
				return w, why
			}
		}
	}
	if at == "" {
		at = "/"
	}
	return at, ss.explain(node, v, leafMessage(err))
}

// explain says why v fails the keyword of node that the validator's
// message leaf names, in the manifest's own words ("maximum: got 1.2,
// want 1", "missing property 'slice_id'"); a keyword it does not know
// keeps the validator's message.
func (ss *schemaSet) explain(node map[string]any, v any, leaf string) string {
	keyword, _, _ := strings.Cut(leaf, ":")
	switch keyword {
	case "type":
		return fmt.Sprintf("got %s, want %v", jsonTypeOf(v), node["type"])
	case "minimum", "maximum":
		return fmt.Sprintf("%s: got %s, want %s", keyword, number(v), number(node[keyword]))
	case "minLength":
		str, _ := v.(string)
		return fmt.Sprintf("minLength: got %d, want %s", utf8.RuneCountInString(str), number(node[keyword]))
	case "pattern":
		return fmt.Sprintf("'%v' does not match pattern '%v'", v, node["pattern"])
	case "enum", "const":
		var want []string
		if keyword == "const" {
			want = append(want, quoteValue(node["const"]))
		} else {
			list, _ := node["enum"].([]any)
			for _, e := range list {
				want = append(want, quoteValue(e))
			}
		}
		return "value must be one of " + strings.Join(want, ", ")
	case "required":
		obj, _ := v.(map[string]any)
		var missing []string
		req, _ := node["required"].([]any)
		if then, ok := node["then"].(map[string]any); ok && ss.passes(node["if"], v) {
			more, _ := then["required"].([]any)
			req = append(slices.Clip(req), more...)
		}
		for _, r := range req {
			if k, _ := r.(string); k != "" {
				if _, ok := obj[k]; !ok && !slices.Contains(missing, "'"+k+"'") {
					missing = append(missing, "'"+k+"'")
				}
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			return "missing property " + missing[0]
		default:
			return "missing properties " + strings.Join(missing, ", ")
		}
	}
	return leaf
}

// passes reports whether v passes the sub-schema cond.
func (ss *schemaSet) passes(cond any, v any) bool {
	n, ok := cond.(map[string]any)
	if !ok {
		return false
	}
	r, err := ss.resolveCached(n)
	return err == nil && r.Validate(v) == nil
}

// jsonTypeOf names the JSON type of a generic JSON value.
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// number writes a JSON number as the manifest holds it (1.2, not 1.200000).
func number(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// quoteValue writes an enum member: strings in single quotes.
func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// pointerToken escapes a member name for a JSON pointer (RFC 6901).
func pointerToken(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// leafMessage is the validator's own reason, without the chain of
// "validating <schema>: " it is wrapped in.
func leafMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// decodeInstance reads raw as the validator's generic JSON value (numbers
// as float64, which the validator types as integer when they are whole).
func decodeInstance(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// validateVersion is the version of what Validate checks besides the
// schema (the invariants it cannot say, unique slice ids): raise it with
// any change to them.
const validateVersion = "asdd-validate/1"

// SchemaVersion names what Validate checks in this release: the SHA-256
// of the embedded schema and the version of the invariants. Bytes that
// passed Validate under one version must be checked again under another.
var SchemaVersion = sync.OnceValue(func() string {
	return validateVersion + " sha256:" + fmt.Sprintf("%x", sha256.Sum256(Schema))
})

// Validate checks raw against the manifest schema and the invariants a
// schema cannot say (unique slice ids). A violation is an INVALID_INPUT
// error naming the member.
func Validate(raw []byte) error {
	ss, err := compiledSchema()
	if err != nil {
		return err
	}
	// The slices of a large manifest are validated one at a time against
	// their part of the schema (the manifest's items are exactly that
	// part), so that it is never held whole in the validator's generic
	// form, several times its size; a small one is validated whole, which
	// spares a process resolving the slice's part on its own. Anything that
	// is not an object with a slices array takes the whole-document path,
	// which names the problem.
	if len(raw) <= wholeBelow {
		return validateWhole(ss, raw)
	}
	var top map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(raw, &top) != nil || json.Unmarshal(top["slices"], &items) != nil || items == nil {
		return validateWhole(ss, raw)
	}
	top["slices"] = json.RawMessage("[]")
	rest, err := json.Marshal(top)
	if err != nil {
		return validateWhole(ss, raw)
	}
	if err := validateWhole(ss, rest); err != nil {
		return err
	}
	seen := make(map[string]bool, len(items))
	for i, item := range items {
		v, err := decodeInstance(item)
		if err != nil {
			return reason.New(reason.InvalidInput, "manifest is not valid JSON: %v", err)
		}
		if err := ss.validateValue(partSlice, v, "/slices/"+strconv.Itoa(i)); err != nil {
			return err
		}
		id, _ := v.(map[string]any)["slice_id"].(string)
		if seen[id] {
			return reason.New(reason.InvalidInput, "manifest does not match its schema: slices[%d]: duplicate slice_id %q", i, id)
		}
		seen[id] = true
	}
	return nil
}

// wholeBelow is the size of manifest that Validate checks in one piece.
const wholeBelow = 64 << 10

// validateWhole checks raw against the whole schema in one piece.
func validateWhole(ss *schemaSet, raw []byte) error {
	v, err := decodeInstance(raw)
	if err != nil {
		return reason.New(reason.InvalidInput, "manifest is not valid JSON: %v", err)
	}
	if err := ss.validateValue(partWhole, v, ""); err != nil {
		return err
	}
	if obj, ok := v.(map[string]any); ok {
		if list, ok := obj["slices"].([]any); ok {
			seen := map[string]bool{}
			for i, s := range list {
				id, _ := s.(map[string]any)["slice_id"].(string)
				if seen[id] {
					return reason.New(reason.InvalidInput, "manifest does not match its schema: slices[%d]: duplicate slice_id %q", i, id)
				}
				seen[id] = true
			}
		}
	}
	return nil
}
