package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
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
	schemas   map[string]any // component name → schema
	names     []string       // component names, in order
	asddBody  any            // POST /v1/asdd/{op}'s body schema
	cycleArgs any            // POST /v1/cycle's args schema
}

const (
	asddBodyPtr  = "/paths/~1v1~1asdd~1{op}/post/requestBody/content/application~1json/schema"
	cycleArgsPtr = "/paths/~1v1~1cycle/post/requestBody/content/application~1json/schema/properties/args"
	schemasPtr   = "/components/schemas"
)

func generate(t *testing.T) generated {
	t.Helper()
	g := generated{schemas: map[string]any{}}
	add := func(name string, typ reflect.Type) map[string]any {
		s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{})
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
	g.asddBody = map[string]any{"description": "the body of operation OP is the schema asdd-OP", "anyOf": refs}
	refs = nil
	for _, op := range wire.CycleOps() {
		if typ, ok := wire.CycleOpType(op); ok {
			refs = append(refs, add("cycle-"+op, typ))
		}
	}
	refs = append(refs, map[string]any{"type": "object", "description": "put: the whole cycle document"})
	g.cycleArgs = map[string]any{"description": "the args of operation OP are the schema cycle-OP (put: the whole cycle document; sync and rebuild take none)", "anyOf": refs}
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
		if (strings.HasPrefix(name, "asdd-") || strings.HasPrefix(name, "cycle-")) && g.schemas[name] == nil {
			t.Errorf("openapi.json has a schema %s for no operation (%s)", name, hint)
		}
	}
	if !reflect.DeepEqual(at(asddBodyPtr), g.asddBody) {
		t.Errorf("openapi.json's POST /v1/asdd/{op} body is not the generated one (%s)", hint)
	}
	if !reflect.DeepEqual(at(cycleArgsPtr), g.cycleArgs) {
		t.Errorf("openapi.json's POST /v1/cycle args are not the generated ones (%s)", hint)
	}
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
		if !strings.HasPrefix(s, "asdd-") && !strings.HasPrefix(s, "cycle-") {
			member(s, v)
		}
	}
	for _, name := range g.names {
		b, _ := json.Marshal(g.schemas[name])
		member(name, b)
	}
	schemas.WriteByte('}')
	doc = splice(t, doc, schemasPtr, schemas.Bytes())
	b, _ := json.Marshal(g.asddBody)
	doc = splice(t, doc, asddBodyPtr, b)
	b, _ = json.Marshal(g.cycleArgs)
	doc = splice(t, doc, cycleArgsPtr, b)
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
