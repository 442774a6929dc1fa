package jsonval

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// slowDecode is Decode with encoding/json alone.
func slowDecode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, errNotFast
	}
	return v, nil
}

// Whatever the fast path decodes, encoding/json decodes to the same tree.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.50,-0,1e3,{"b":null}],"c":"\u00e9<\ud83d\ude00>"}`, `"x"`, ` 1 `, `{"a":1,"a":2}`, "\"\xff\"", `[1,]`, `{"a":1} {}`, `tru`, `{"A":1,"a":2}`, `"\ud800"`, `["\udc00x", 1e999]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fast, ok := decodeFast(raw)
		slow, err := slowDecode(raw)
		if !ok {
			return
		}
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %#v, encoding/json %#v (%v)", raw, fast, slow, err)
		}
	})
}
