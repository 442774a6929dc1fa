package impl

import (
	"encoding/json"
	"os"
	"testing"
)

// TestCodecMatchesPreviousRelease: testdata/prev-codec.json holds manifests
// (random ones, compact and as jq indents them; unknown members at every
// level, in any place and spacing; duplicate and escaped names; awkward
// strings and numbers; a null or a wrong type in every field; damaged
// documents) with what the previous release's hand-written codec (commit
// 66380be) made of each: the bytes Encode(Decode(in)) gave, or its error.
// The codec gives the same bytes and the same errors.
func TestCodecMatchesPreviousRelease(t *testing.T) {
	raw, err := os.ReadFile("testdata/prev-codec.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []struct {
		In   []byte `json:"in"`
		Out  []byte `json:"out"`
		Same bool   `json:"same"` // Out is In
		Err  string `json:"err"`
	}
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 150 {
		t.Fatalf("only %d manifests", len(corpus))
	}
	// Where the id of a task follows the field in error, the previous
	// codec did not name it; this one does. A syntax error gives its place.
	improved := map[string]string{
		`{} {}`: `CORRUPT_STATE: manifest at .impl/manifest.json is not a valid task manifest: invalid character '{' after top-level value at byte 3`,
		`{"tasks":[{"retries":"x","id":"late"}]}`: `CORRUPT_STATE: manifest at .impl/manifest.json is not a valid task manifest: tasks[0] (id "late"): field "retries": want a whole number, found string`,
	}
	for _, c := range corpus {
		m, err := Decode(c.In)
		var out []byte
		if err == nil {
			out, err = Encode(m)
		}
		if c.Err != "" {
			want := c.Err
			if w, ok := improved[string(c.In)]; ok {
				want = w
			}
			if err == nil || err.Error() != want {
				t.Errorf("%q:\n got error %v\nwant error %s", c.In, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.In, err)
			continue
		}
		if c.Same {
			c.Out = c.In
		}
		if string(out) != string(c.Out) {
			t.Errorf("%q:\n got %s\nwant %s", c.In, out, c.Out)
		}
	}
}
