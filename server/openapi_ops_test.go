package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/wire"
)

var update = flag.Bool("update", false, "rewrite the generated parts of openapi.json from the wire types")

// The generated parts of openapi.json: the JSON Schema of every
// operation's body (components "asdd-<op>", "cycle-<op>"), made from the
// Go types the daemon decodes them into, and the request bodies that refer
// to them.
type generated struct {
	schemas map[string]any // component name → schema
	names   []string       // component names, in order
	at      []placed       // the schemas of request and response bodies
}

// placed is a generated value at a JSON pointer of the document.
type placed struct {
	ptr   string
	value any
}

const schemasPtr = "/components/schemas"

// bodies are the routes whose request and response bodies are wire types
// (the others are described by hand, and checked by TestOpenAPIMatchesWire).
var bodies = []struct {
	path      string
	req, resp reflect.Type
}{
	{"/v1/impl", reflect.TypeFor[wire.ImplRequest](), reflect.TypeFor[wire.ImplResponse]()},
	{"/v1/state", reflect.TypeFor[wire.StateRequest](), reflect.TypeFor[wire.StateResponse]()},
	{"/v1/cycle", reflect.TypeFor[wire.CycleRequest](), reflect.TypeFor[wire.CycleResponse]()},
	{"/v1/rollback", reflect.TypeFor[wire.RollbackRequest](), nil},
	{"/v1/rebuild", reflect.TypeFor[wire.RebuildRequest](), reflect.TypeFor[wire.RebuildResponse]()},
	{"/v1/jq", reflect.TypeFor[wire.JQRequest](), reflect.TypeFor[wire.JQResponse]()},
}

func pathPtr(path string) string {
	return "/paths/" + strings.ReplaceAll(path, "/", "~1") + "/post"
}

const (
	jsonBody = "/content/application~1json/schema"
	reqBody  = "/requestBody" + jsonBody
	okBody   = "/responses/200" + jsonBody
)

func generate(t *testing.T) generated {
	t.Helper()
	g := generated{schemas: map[string]any{}}
	add := func(name string, typ reflect.Type) map[string]any {
		s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g.schemas[name] = toAny(t, s)
		g.names = append(g.names, name)
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	var refs []any
	for _, op := range wire.ASDDOps() {
		typ, _ := wire.ASDDOpType(op)
		refs = append(refs, add("asdd-"+op, typ))
	}
	g.at = append(g.at, placed{pathPtr("/v1/asdd/{op}") + reqBody, map[string]any{"description": "the body of operation OP is the schema asdd-OP", "anyOf": refs}})
	refs = nil
	for _, op := range wire.CycleOps() {
		if typ, ok := wire.CycleOpType(op); ok {
			refs = append(refs, add("cycle-"+op, typ))
		}
	}
	refs = append(refs, map[string]any{"type": "object", "description": "put: the whole cycle document"})
	cycleArgs := map[string]any{"description": "the args of operation OP are the schema cycle-OP (put: the whole cycle document; sync and rebuild take none)", "anyOf": refs}
	for _, b := range bodies {
		g.at = append(g.at, placed{pathPtr(b.path) + reqBody, add(b.req.Name(), b.req)})
		if b.resp != nil {
			g.at = append(g.at, placed{pathPtr(b.path) + okBody, add(b.resp.Name(), b.resp)})
		}
	}
	// A cycle request's args are the operation's.
	g.schemas["CycleRequest"].(map[string]any)["properties"].(map[string]any)["args"] = cycleArgs
	return g
}

func toAny(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The operation bodies openapi.json documents are the ones the daemon
// decodes: regenerate with go test ./server -run TestOpenAPIOperationSchemas -update.
func TestOpenAPIOperationSchemas(t *testing.T) {
	g := generate(t)
	doc := server.OpenAPI()
	if *update {
		doc = rewrite(t, doc, g)
		if err := os.WriteFile("openapi.json", doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var d any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	at := func(ptr string) any {
		v := d
		for _, tok := range strings.Split(ptr, "/")[1:] {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[tok]
		}
		return v
	}
	const hint = "regenerate: go test ./server -run TestOpenAPIOperationSchemas -update"
	schemas, _ := at(schemasPtr).(map[string]any)
	for _, name := range g.names {
		if !reflect.DeepEqual(schemas[name], g.schemas[name]) {
			t.Errorf("openapi.json's schema %s is not the one of its Go type (%s)", name, hint)
		}
	}
	for name := range schemas {
		if generatedName(name) && g.schemas[name] == nil {
			t.Errorf("openapi.json has a schema %s for no operation (%s)", name, hint)
		}
	}
	for _, p := range g.at {
		if !reflect.DeepEqual(at(p.ptr), p.value) {
			t.Errorf("openapi.json's %s is not the generated schema (%s)", p.ptr, hint)
		}
	}
}

// generatedName reports whether a component's name is one of an
// operation's generated schemas.
func generatedName(name string) bool {
	return strings.HasPrefix(name, "asdd-") || strings.HasPrefix(name, "cycle-")
}

// rewrite puts g into doc, keeping the rest of it (and its member order)
// as it is.
func rewrite(t *testing.T, doc []byte, g generated) []byte {
	t.Helper()
	var schemas bytes.Buffer
	schemas.WriteByte('{')
	n := 0
	member := func(name string, v []byte) {
		if n > 0 {
			schemas.WriteByte(',')
		}
		n++
		fmt.Fprintf(&schemas, "%q:%s", name, v)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(valueAt(t, doc, schemasPtr)))
	if _, err := dec.ReadToken(); err != nil {
		t.Fatal(err)
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		s := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			t.Fatal(err)
		}
		if g.schemas[s] == nil && !generatedName(s) {
			member(s, v)
		}
	}
	for _, name := range g.names {
		b, _ := json.Marshal(g.schemas[name])
		member(name, b)
	}
	schemas.WriteByte('}')
	doc = splice(t, doc, schemasPtr, schemas.Bytes())
	for _, p := range g.at {
		b, _ := json.Marshal(p.value)
		doc = splice(t, doc, p.ptr, b)
	}
	v := jsontext.Value(doc)
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatal(err)
	}
	return append(v, '\n')
}

// valueAt returns the bytes of the value at ptr in doc.
func valueAt(t *testing.T, doc []byte, ptr string) []byte {
	start, end := valueRange(t, doc, ptr)
	return doc[start:end]
}

// splice replaces the value at ptr in doc by v.
func splice(t *testing.T, doc []byte, ptr string, v []byte) []byte {
	start, end := valueRange(t, doc, ptr)
	return append(append(append([]byte(nil), doc[:start]...), v...), doc[end:]...)
}

func valueRange(t *testing.T, doc []byte, ptr string) (int, int) {
	t.Helper()
	dec := jsontext.NewDecoder(bytes.NewReader(doc))
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			t.Fatalf("openapi.json has no value at %s", ptr)
		}
		tok, err := dec.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind() == '"' && string(dec.StackPointer()) == ptr {
			if k, n := dec.StackIndex(dec.StackDepth()); k == '{' && n%2 == 1 {
				// ptr's name was just read: its value is next.
				start := int(dec.InputOffset())
				if err := dec.SkipValue(); err != nil {
					t.Fatal(err)
				}
				end := int(dec.InputOffset())
				for start < end && (doc[start] == ' ' || doc[start] == ':' || doc[start] == '\n' || doc[start] == '\t' || doc[start] == '\r') {
					start++
				}
				return start, end
			}
		}
	}
}

// The bodies openapi.json describes by hand (with descriptions) have the
// members of the wire types the server encodes.
func TestOpenAPIMatchesWire(t *testing.T) {
	type schema struct {
		Ref        string         `json:"$ref"`
		AllOf      []schema       `json:"allOf"`
		Properties map[string]any `json:"properties"`
	}
	var doc struct {
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	// members lists a schema's members, through $ref and allOf.
	var members func(s schema) []string
	members = func(s schema) []string {
		if s.Ref != "" {
			return members(doc.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")])
		}
		var out []string
		for p := range s.Properties {
			out = append(out, p)
		}
		for _, a := range s.AllOf {
			out = append(out, members(a)...)
		}
		return out
	}
	for name, typ := range map[string]reflect.Type{
		"PutRequest":  reflect.TypeFor[wire.PutRequest](),
		"PutResponse": reflect.TypeFor[wire.PutResponse](),
		"Keys":        reflect.TypeFor[wire.KeysResponse](),
		"History":     reflect.TypeFor[wire.HistoryResponse](),
		"Verify":      reflect.TypeFor[wire.VerifyResponse](),
		"Error":       reflect.TypeFor[wire.ErrorBody](),
		"OpResponse":  reflect.TypeFor[wire.OpResponse](),
	} {
		s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var want []string
		for p := range s.Properties {
			want = append(want, p)
		}
		got := members(doc.Components.Schemas[name])
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("openapi.json's %s has members %v, wire.%s has %v", name, got, typ.Name(), want)
		}
	}
}
