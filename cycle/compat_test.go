package cycle

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// TestCodecMatchesPreviousRelease: testdata/prev-codec.json holds
// documents (random states, unknown fields in any order and spacing,
// duplicate and miscased names, awkward strings and numbers, damaged
// documents) with what the previous release's codec (commit 66380be,
// encoding/json and a second decode for the unknown fields) made of each:
// the bytes Encode(Decode(in)) gave, or the reason code of the error.
// The codec gives the same bytes and the same codes.
func TestCodecMatchesPreviousRelease(t *testing.T) {
	raw, err := os.ReadFile("testdata/prev-codec.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus []struct {
		In   []byte `json:"in"`
		Out  []byte `json:"out"`
		Code string `json:"code"`
		Same bool   `json:"same"` // Out is In
	}
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 80 {
		t.Fatalf("only %d documents", len(corpus))
	}
	for _, c := range corpus {
		s, err := Decode(c.In)
		var out []byte
		if err == nil {
			out, err = Encode(s)
		}
		if c.Code != "" {
			if code := string(reason.CodeOf(err)); code != c.Code {
				t.Errorf("%q:\n got code %q (%v), want %s", c.In, code, err, c.Code)
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
