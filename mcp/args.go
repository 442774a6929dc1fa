package mcp

import (
	"reflect"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
)

// strictArgs decodes a tool's arguments straight into its input type when
// that alone proves them valid against the inferred schema, so that a call
// costs one decode instead of a generic decode, a schema walk and a typed
// decode. It applies to input types whose fields are all scalars, pointers
// to scalars, or slices and string-keyed maps of scalars: for those, the
// schema says no more than the Go type (each property's JSON type, no
// other property, the required ones present), and a strict decode (exact
// member names, no unknown or duplicate member) checks the same, given
// that no value is null and no required field is left zero. Anything else
// (and any doubt) takes the general path, which names what is wrong.
type strictArgs struct {
	ok       bool
	required []int // field indices of the schema's required properties
}

func newStrictArgs[In any](sch *jsonschema.Schema) strictArgs {
	rt := reflect.TypeFor[In]()
	if rt.Kind() != reflect.Struct {
		return strictArgs{}
	}
	var sa strictArgs
	names := map[string]bool{}
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Anonymous || !f.IsExported() || !plainType(f.Type) {
			return strictArgs{}
		}
		name, _, _ := cutTag(f.Tag.Get("json"))
		if name == "" || name == "-" {
			return strictArgs{}
		}
		names[name] = true
		if slices.Contains(sch.Required, name) {
			sa.required = append(sa.required, i)
		}
	}
	// The schema must be the one inferred from these fields.
	if len(sch.Properties) != len(names) || len(sa.required) != len(sch.Required) {
		return strictArgs{}
	}
	for p := range sch.Properties {
		if !names[p] {
			return strictArgs{}
		}
	}
	sa.ok = true
	return sa
}

func cutTag(tag string) (name, rest string, found bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// plainType: a scalar, a pointer to one, or a slice or string-keyed map
// of scalars.
func plainType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer:
		return scalarType(t.Elem())
	case reflect.Slice:
		return scalarType(t.Elem())
	case reflect.Map:
		return t.Key().Kind() == reflect.String && scalarType(t.Elem())
	}
	return scalarType(t)
}

func scalarType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// decode reports whether args decoded into v and so are valid; false:
// take the general path (v may be partly set).
func (sa strictArgs) decode(args []byte, v any) bool {
	if !sa.ok || hasNull(args) {
		return false
	}
	if err := jsonv2.Unmarshal(args, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		return false
	}
	rv := reflect.ValueOf(v).Elem()
	for _, i := range sa.required {
		if rv.Field(i).IsZero() {
			return false // absent, or present and zero: the schema decides
		}
	}
	return true
}

// hasNull reports whether a JSON text has a null literal outside strings.
func hasNull(b []byte) bool {
	in, esc := false, false
	for i, c := range b {
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == 'n' && i+4 <= len(b) && string(b[i:i+4]) == "null":
			return true
		}
	}
	return false
}
