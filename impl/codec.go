package impl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/custodian-dev/custodian/internal/legacyjson"
	"github.com/custodian-dev/custodian/reason"
)

// The manifest's codec is github.com/go-json-experiment/json driven by the
// struct tags of manifest.go. It keeps what the previous releases (the
// script's jq, then a hand-written codec) did, so that rewriting a
// manifest changes only what the operation changed:
//
//   - Encode writes compact JSON: the known members in the script's order,
//     then Extra's as they were written (white space aside); a nil list as
//     []; HTML characters unescaped; strings escaped as encoding/json does.
//   - Decode wants a string, a whole number, a list or an object where the
//     script writes one; null only for branch, check_results and error,
//     and for a list (empty).
//   - A name given twice in the manifest, its plan, a phase or a task keeps
//     its first position and its last value, as jq reads it. An unknown
//     member's name is written back in its plain form.
//   - Invalid UTF-8 is read as jq reads it.
//   - An error names the place: tasks[2] (id "1.3"): field "retries": want
//     a whole number, found string.

var (
	decodeOptions = jsonv2.JoinOptions(
		jsontext.AllowInvalidUTF8(true),
		jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
			jsonv2.UnmarshalFromFunc(notNull[*string]),
			jsonv2.UnmarshalFromFunc(notNull[*Status]),
			jsonv2.UnmarshalFromFunc(notNull[*int]),
			jsonv2.UnmarshalFromFunc(notNull[*manifestJSON]),
			jsonv2.UnmarshalFromFunc(notNull[*Plan]),
			jsonv2.UnmarshalFromFunc(notNull[*Phase]),
			jsonv2.UnmarshalFromFunc(notNull[*Task]),
		)),
	)
	encodeOptions = jsonv2.JoinOptions(
		jsontext.AllowDuplicateNames(true), // inside unknown members, as read
		jsontext.AllowInvalidUTF8(true),
		jsontext.PreserveRawStrings(true),
		jsonv2.WithMarshalers(jsonv2.JoinMarshalers(legacyjson.Strings[string](), legacyjson.Strings[Status]())),
	)
	lenient = []jsonv2.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
)

// errNull is a null where the manifest wants a value: the library would
// take it as no value (an empty object, a zero).
var errNull = errors.New("null")

func notNull[T any](dec *jsontext.Decoder, _ T) error {
	if dec.PeekKind() == 'n' {
		return errNull
	}
	return errors.ErrUnsupported
}

// Decode parses a manifest. Any error is a CORRUPT_STATE *reason.Error that
// names what is wrong and where.
func Decode(data []byte) (*Manifest, error) {
	m, err := decode(data)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "manifest at %s is not a valid task manifest: %w", Key, err)
	}
	return m, nil
}

func decode(data []byte) (*Manifest, error) {
	m := &Manifest{}
	err := jsonv2.Unmarshal(data, (*manifestJSON)(m), decodeOptions)
	if err != nil {
		// A name given twice (or a bad value that a later one of the same
		// name replaces): read the manifest as jq does; inside an unknown
		// member, keep it.
		if norm, dup, err2 := lastWins(data); err2 == nil && (dup || errors.Is(err, jsontext.ErrDuplicateName)) {
			*m = Manifest{}
			err = jsonv2.Unmarshal(norm, (*manifestJSON)(m), decodeOptions, jsontext.AllowDuplicateNames(true))
		}
	}
	if err != nil {
		return nil, describe(err, data)
	}
	if err := m.plainNames(); err != nil {
		return nil, err
	}
	return m, nil
}

// Encode renders the manifest as compact JSON in the script's field order.
func Encode(m *Manifest) ([]byte, error) {
	return jsonv2.Marshal((*manifestJSON)(m), encodeOptions)
}

// The four types carry JSON methods so that encoding/json (a task in
// --json output) writes the file's form too; they hand the work back to
// the library through method-less copies of the types. The library takes
// MarshalJSONTo over MarshalJSON, on the manifest's encoder.
type (
	manifestJSON Manifest
	planJSON     Plan
	phaseJSON    Phase
	taskJSON     Task
)

// UnmarshalJSON implements json.Unmarshaler as Decode does.
func (m *Manifest) UnmarshalJSON(data []byte) error {
	d, err := decode(data)
	if err != nil {
		return err
	}
	*m = *d
	return nil
}

// MarshalJSON implements json.Marshaler as Encode does.
func (m Manifest) MarshalJSON() ([]byte, error) { return Encode(&m) }

// MarshalJSON implements json.Marshaler.
func (p Plan) MarshalJSON() ([]byte, error) { return jsonv2.Marshal((*planJSON)(&p), encodeOptions) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (p *Plan) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*planJSON)(p))
}

// MarshalJSON implements json.Marshaler.
func (p Phase) MarshalJSON() ([]byte, error) { return jsonv2.Marshal((*phaseJSON)(&p), encodeOptions) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (p *Phase) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*phaseJSON)(p))
}

// MarshalJSON implements json.Marshaler.
func (t Task) MarshalJSON() ([]byte, error) { return jsonv2.Marshal((*taskJSON)(&t), encodeOptions) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (t *Task) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*taskJSON)(t))
}

// Member is one name/value pair of a JSON object, in document order.
type Member struct {
	Key   string
	Value jsontext.Value
}

// Fields returns the task's fields in file order, each value JSON-encoded:
// the script's eleven fields, then any others the file carried.
func (t Task) Fields() []Member {
	raw, err := jsonv2.Marshal(&t, encodeOptions)
	if err != nil {
		return nil
	}
	var out []Member
	_ = eachMember(raw, func(name string, value jsontext.Value) error {
		out = append(out, Member{name, value.Clone()})
		return nil
	})
	return out
}

// eachMember calls f with the name and the raw value of each member of
// the object v, in order; v that is not an object is not an error (the
// decode reports it).
func eachMember(v []byte, f func(name string, value jsontext.Value) error) error {
	dec := jsontext.NewDecoder(bytes.NewReader(v), lenient...)
	if dec.PeekKind() != '{' {
		return nil
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // before the next read voids tok
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := f(name, value); err != nil {
			return err
		}
	}
	return nil
}

// rebuild returns the object v with each name once, at its first position
// with its last value (transformed by inner when given), names written in
// their plain form, values as they are.
func rebuild(v []byte, dup *bool, inner func(name string, value jsontext.Value) (jsontext.Value, error)) (jsontext.Value, error) {
	if jsontext.Value(v).Kind() != '{' {
		return v, nil // not an object: the decode reports it
	}
	var names []string
	values := map[string]jsontext.Value{}
	err := eachMember(v, func(name string, value jsontext.Value) error {
		value = value.Clone()
		if inner != nil {
			var err error
			if value, err = inner(name, value); err != nil {
				return err
			}
		}
		if _, ok := values[name]; !ok {
			names = append(names, name)
		} else if dup != nil {
			*dup = true
		}
		values[name] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		out = legacyjson.AppendQuote(out, name)
		out = append(out, ':')
		out = append(out, values[name]...)
	}
	return append(out, '}'), nil
}

// lastWins rewrites a manifest whose objects give a name twice as jq reads
// it: the manifest, its plan, phases and tasks each keep every name once,
// at its first position, with its last value. Unknown members' values are
// left as they are. dup reports whether a name was given twice.
func lastWins(data []byte) (_ []byte, dup bool, _ error) {
	each := func(list jsontext.Value) (jsontext.Value, error) {
		var elems []jsontext.Value
		if err := jsonv2.Unmarshal(list, &elems, lenient...); err != nil {
			return list, nil // not a list: the decode reports it
		}
		out := []byte{'['}
		for i, e := range elems {
			e, err := rebuild(e, &dup, nil)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, e...)
		}
		return append(out, ']'), nil
	}
	out, err := rebuild(data, &dup, func(name string, value jsontext.Value) (jsontext.Value, error) {
		switch name {
		case "plan":
			return rebuild(value, &dup, nil)
		case "phases", "tasks":
			return each(value)
		}
		return value, nil
	})
	return out, dup, err
}

// plainNames writes the names of unknown members in their plain form, as
// the previous releases did: a name the file escaped (\u0074ask) or that
// holds a line separator or invalid UTF-8 would otherwise be kept as
// written.
func (m *Manifest) plainNames() error {
	fix := func(x *jsontext.Value) error {
		if len(*x) == 0 || bytes.IndexByte(*x, '\\') < 0 && isASCII(*x) {
			return nil // no name can be other than plain
		}
		v, err := rebuild(*x, nil, nil)
		*x = v
		return err
	}
	err := fix(&m.Extra)
	if e := fix(&m.Plan.Extra); err == nil {
		err = e
	}
	for i := range m.Phases {
		if e := fix(&m.Phases[i].Extra); err == nil {
			err = e
		}
	}
	for i := range m.Tasks {
		if e := fix(&m.Tasks[i].Extra); err == nil {
			err = e
		}
	}
	return err
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// describe turns the library's error into one that names the place in the
// manifest's terms.
func describe(err error, data []byte) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of JSON input")
	}
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) {
		var syn *jsontext.SyntacticError
		if errors.As(err, &syn) {
			return fmt.Errorf("%w at byte %d", syn.Err, syn.ByteOffset)
		}
		return err
	}
	path := strings.Split(string(se.JSONPointer), "/")[1:]
	found := kind(se, false)
	switch {
	case len(path) == 0:
		return fmt.Errorf("want a JSON object, found %s", article(found))
	case path[0] == "plan" && len(path) == 1:
		return fmt.Errorf("plan: want a JSON object, found %s", article(found))
	case path[0] == "plan":
		return fieldError("plan", path[1:], se)
	case path[0] != "phases" && path[0] != "tasks" || len(path) == 1:
		return fieldError("manifest", path, se)
	}
	where := fmt.Sprintf("%s[%s]", path[0], path[1])
	if path[0] == "tasks" {
		if id, ok := taskID(data, path[1]); ok {
			where += fmt.Sprintf(" (id %q)", id)
		}
	}
	if len(path) == 2 {
		return fmt.Errorf("%s: want a JSON object, found %s", where, article(found))
	}
	return fieldError(where, path[2:], se)
}

// fieldError reports a field of the wrong type: path is the field's name
// and, for a list's element, its index.
func fieldError(where string, path []string, se *jsonv2.SemanticError) error {
	name := path[0]
	want := wants[name]
	if where == "plan" {
		want = "a string"
	}
	if len(path) > 1 {
		name = fmt.Sprintf("%s[%s]", name, path[1])
		want = elemWants[path[0]]
	}
	return fmt.Errorf("%s: field %q: want %s, found %s", where, name, want, kind(se, want == "a whole number"))
}

var (
	wants = map[string]string{
		"version": "a string", "phases": "an array", "tasks": "an array",
		"number": "a whole number", "phase": "a whole number", "retries": "a whole number",
		"depends_on": "an array of whole numbers", "bounded_contexts": "an array of strings",
		"id": "a string", "description": "a string", "status": "a string", "created_at": "a string", "updated_at": "a string",
		"branch": "a string or null", "check_results": "a string or null", "error": "a string or null",
	}
	elemWants = map[string]string{"depends_on": "a whole number", "bounded_contexts": "a string"}
)

// kind names what was found: a JSON type, or the number itself where a
// whole number was wanted.
func kind(se *jsonv2.SemanticError, number bool) string {
	if errors.Is(se, errNull) {
		return "null"
	}
	switch se.JSONKind {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '0':
		if number && len(se.JSONValue) > 0 {
			return string(se.JSONValue)
		}
		return "number"
	}
	return "nothing"
}

func article(k string) string {
	switch k {
	case "array", "object":
		return "an " + k
	case "null", "nothing":
		return k
	}
	return "a " + k
}

// taskID finds the id of task i in data, for an error message.
func taskID(data []byte, i string) (string, bool) {
	n, err := strconv.Atoi(i)
	if err != nil {
		return "", false
	}
	var doc struct {
		Tasks []jsontext.Value `json:"tasks"`
	}
	if jsonv2.Unmarshal(data, &doc, lenient...) != nil || n >= len(doc.Tasks) {
		return "", false
	}
	var task struct {
		ID *string `json:"id"`
	}
	if jsonv2.Unmarshal(doc.Tasks[n], &task, lenient...) != nil || task.ID == nil {
		return "", false
	}
	return *task.ID, true
}
