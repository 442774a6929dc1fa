// Package compat holds Custodian's drop-ins for the plugins that wrote the
// pipeline's state files themselves (DESIGN.md §8): the jq programs of the
// state-manager plugins run as a pure function inside a custodian commit,
// the shim that replaces principled-implementation's task-manifest.sh
// copies, and the replacement lib/state.sh of the state-manager plugins.
// Everything here is written from those plugins' documented interfaces.
package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/itchyny/gojq"

	"github.com/custodian-dev/custodian/reason"
)

// Arg is a jq variable: --arg name value (a string) or --argjson name json.
type Arg struct {
	Name  string
	Value any // as gojq takes it: nil, bool, int, float64, *big.Int, string, []any, map[string]any
}

// StringArg is --arg NAME VALUE.
func StringArg(name, value string) Arg { return Arg{name, value} }

// JSONArg is --argjson NAME JSON.
func JSONArg(name, text string) (Arg, error) {
	if err := checkText("--argjson "+name, text); err != nil {
		return Arg{}, err
	}
	v, err := decode([]byte(text))
	if err != nil {
		return Arg{}, reason.New(reason.InvalidInput, "--argjson %s: %v", name, err)
	}
	return Arg{name, v}, nil
}

// The budget of one program: JQTimeout bounds its run (an endless
// `repeat(.)` is stopped), JQMaxMemory the heap it may grow (a
// `[range(1e9)]` is stopped long before it exhausts the machine). Either
// is INVALID_INPUT.
const (
	JQTimeout   = 2 * time.Second
	JQMaxMemory = 256 << 20
	// JQMaxResult bounds the encoded result (a document is at most
	// 64 MiB): a huge value is refused while it is encoded.
	JQMaxResult = 64 << 20
)

// JQ runs a jq program on a JSON document and returns its one result as
// JSON, members of objects kept in the order the document had them (new
// members after, in key order). It is a pure function of its arguments: the
// program sees no environment ($ENV and env are empty) and no other input.
// A program that does not parse or compile, fails, or yields no value or
// more than one is INVALID_INPUT.
func JQ(ctx context.Context, program string, doc []byte, args []Arg) ([]byte, error) {
	if err := checkText("jq program", program); err != nil {
		return nil, err
	}
	for _, a := range args {
		if str, ok := a.Value.(string); ok && !utf8.ValidString(str) {
			return nil, reason.New(reason.InvalidInput, "jq variable $%s is not valid UTF-8", a.Name)
		}
	}
	q, err := gojq.Parse(program)
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "jq program %q: %v", program, err)
	}
	names := make([]string, len(args))
	values := make([]any, len(args))
	for i, a := range args {
		if !validName(a.Name) {
			return nil, reason.New(reason.InvalidInput, "jq variable name %q: use letters, digits and _", a.Name)
		}
		names[i], values[i] = "$"+a.Name, a.Value
	}
	code, err := gojq.Compile(q, gojq.WithVariables(names), gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "jq program %q: %v", program, err)
	}
	input, err := decode(doc)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "the document is not JSON: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, JQTimeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go watchMemory(ctx, stop)
	iter := code.RunWithContext(ctx, input, values...)
	var out []any
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break // halt: no more output
			}
			if errors.Is(context.Cause(ctx), errJQMemory) {
				return nil, reason.New(reason.InvalidInput, "jq program %q: %v (%d MiB)", program, errJQMemory, jqMaxMemory>>20)
			}
			if ctx.Err() != nil {
				return nil, reason.New(reason.InvalidInput, "jq program %q ran past %s: %v", program, JQTimeout, ctx.Err())
			}
			return nil, reason.New(reason.InvalidInput, "jq program %q: %v", program, err)
		}
		out = append(out, v)
		if len(out) > 1 {
			return nil, reason.New(reason.InvalidInput, "jq program %q yields more than one value; a state update needs exactly one", program)
		}
	}
	if len(out) == 0 {
		return nil, reason.New(reason.InvalidInput, "jq program %q yields no value; a state update needs exactly one", program)
	}
	var b bytes.Buffer
	if err := encodeLike(&b, out[0], jsontext.Value(bytes.TrimSpace(doc))); err != nil {
		return nil, reason.New(reason.InvalidInput, "jq program %q: %v", program, err)
	}
	return b.Bytes(), nil
}

// jqMaxMemory is JQMaxMemory (tests lower it).
var jqMaxMemory uint64 = JQMaxMemory

var (
	errJQMemory = errors.New("it grew the heap past its memory budget")
	errJQResult = fmt.Errorf("its result is larger than %d MiB", JQMaxResult>>20)
)

// watchMemory stops the program (stop with errJQMemory) when the heap has
// grown by more than JQMaxMemory since it started and still has after a
// collection (the growth may be other work's garbage); it returns when ctx
// ends.
func watchMemory(ctx context.Context, stop context.CancelCauseFunc) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	base := heap()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if h := heap(); h > base+jqMaxMemory {
			runtime.GC()
			if h = heap(); h > base+jqMaxMemory {
				stop(errJQMemory)
				return
			}
			base = max(base, h-jqMaxMemory/2)
		}
	}
}

// checkText refuses text that is not valid UTF-8, or that escapes a lone
// UTF-16 surrogate (\ud800): jq would make either U+FFFD silently.
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return reason.New(reason.InvalidInput, "%s is not valid UTF-8", what)
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			continue
		}
		if s[i+1] != 'u' {
			i++ // an escaped character, a backslash included
			continue
		}
		r, ok := hex4(s[i+2:])
		if !ok {
			continue
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			low, ok := rune(0), false
			if strings.HasPrefix(s[i+6:], "\\u") {
				low, ok = hex4(s[i+8:])
			}
			if !ok || low < 0xdc00 || low > 0xdfff {
				return reason.New(reason.InvalidInput, "%s escapes a lone UTF-16 surrogate (%s): not a character", what, s[i:i+6])
			}
			i += 11
		case utf16.IsSurrogate(r):
			return reason.New(reason.InvalidInput, "%s escapes a lone UTF-16 surrogate (%s): not a character", what, s[i:i+6])
		default:
			i += 5
		}
	}
	return nil
}

// hex4 reads the four hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:4], 16, 32)
	return rune(n), err == nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// decode parses JSON into the values gojq takes, numbers exact: integers
// as int (or *big.Int), others as float64.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return normalize(v), nil
}

func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil && int64(int(i)) == i {
				return int(i)
			}
			if bi, ok := new(big.Int).SetString(s, 10); ok {
				return bi
			}
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = normalize(v[k])
		}
		return v
	}
	return v
}

// encodeLike writes v as compact JSON; an object keeps the member order of
// like (the value it came from), when like is an object too.
func encodeLike(b *bytes.Buffer, v any, like jsontext.Value) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case *big.Int:
		b.WriteString(v.String())
	case float64:
		switch {
		case math.IsNaN(v):
			b.WriteString("null") // as jq prints nan
		case math.IsInf(v, 1):
			b.WriteString("1.7976931348623157e+308")
		case math.IsInf(v, -1):
			b.WriteString("-1.7976931348623157e+308")
		case v == math.Trunc(v) && math.Abs(v) < 1e17:
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		default:
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
	case string:
		q, err := jsontext.AppendQuote(nil, v)
		if err != nil {
			return err
		}
		b.Write(q)
	case []any:
		var likes []jsontext.Value
		if like.Kind() == '[' {
			likes = arrayOf(like)
		}
		b.WriteByte('[')
		for i, e := range v {
			if b.Len() > JQMaxResult {
				return errJQResult
			}
			if i > 0 {
				b.WriteByte(',')
			}
			var l jsontext.Value
			if i < len(likes) {
				l = likes[i]
			}
			if err := encodeLike(b, e, l); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		var order []string
		members := map[string]jsontext.Value{}
		if like.Kind() == '{' {
			order, members = objectOf(like)
		}
		seen := map[string]bool{}
		keys := make([]string, 0, len(v))
		for _, k := range order {
			if _, ok := v[k]; ok && !seen[k] {
				keys = append(keys, k)
				seen[k] = true
			}
		}
		var rest []string
		for k := range v {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		keys = append(keys, rest...)
		b.WriteByte('{')
		for i, k := range keys {
			if b.Len() > JQMaxResult {
				return errJQResult
			}
			if i > 0 {
				b.WriteByte(',')
			}
			q, err := jsontext.AppendQuote(nil, k)
			if err != nil {
				return err
			}
			b.Write(q)
			b.WriteByte(':')
			if err := encodeLike(b, v[k], members[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected value of type %T", v)
	}
	return nil
}

func arrayOf(v jsontext.Value) []jsontext.Value {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	var out []jsontext.Value
	for dec.PeekKind() != ']' {
		e, err := dec.ReadValue()
		if err != nil {
			return out
		}
		out = append(out, e.Clone())
	}
	return out
}

func objectOf(v jsontext.Value) ([]string, map[string]jsontext.Value) {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	members := map[string]jsontext.Value{}
	var order []string
	if _, err := dec.ReadToken(); err != nil {
		return nil, members
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		name := tok.String()
		e, err := dec.ReadValue()
		if err != nil {
			break
		}
		order = append(order, name)
		members[name] = e.Clone()
	}
	return order, members
}
