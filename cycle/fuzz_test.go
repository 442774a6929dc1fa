package cycle

import (
	"bytes"
	"testing"
)

// FuzzDecode: no document makes Decode, Validate or Encode panic; a
// document that decodes encodes to a fixed point (encode, decode, encode
// gives the same bytes), unknown fields included.
func FuzzDecode(f *testing.F) {
	s, err := New(testID, "task", "", 3, t0)
	if err != nil {
		f.Fatal(err)
	}
	s, _, err = Apply(s, Iterate{Extension: "more"}, t0)
	if err != nil {
		f.Fatal(err)
	}
	s, _, err = Apply(s, AppendChange{File: "a.go", Action: "create", Agent: "cd"}, t0)
	if err != nil {
		f.Fatal(err)
	}
	raw, err := Encode(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"cycle_id":"x","extra":{"a":[1,{"b":null}]},"changes":{"iteration_markers":{"1":"t"}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			return
		}
		_ = Validate(s)
		_ = CheckSignal(s)
		first, err := Encode(s)
		if err != nil {
			return // e.g. an unknown field holding invalid JSON cannot be re-encoded
		}
		s2, err := Decode(first)
		if err != nil {
			t.Fatalf("encoded document does not decode: %v\n%s", err, first)
		}
		second, err := Encode(s2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encode is not a fixed point:\n%s\n%s", first, second)
		}
	})
}
