package legacyjson

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type name string

type doc struct {
	S     string         `json:"s"`
	N     name           `json:"n"`
	Extra jsontext.Value `json:",inline"`
}

// TestStringsAsEncodingJSON: with Strings, strings of both types encode as
// encoding/json (HTML escaping off) encodes them, and a raw value is kept
// as written.
func TestStringsAsEncodingJSON(t *testing.T) {
	opts := jsonv2.JoinOptions(
		jsontext.AllowInvalidUTF8(true), jsontext.PreserveRawStrings(true), jsontext.EscapeForJS(false),
		jsonv2.WithMarshalers(jsonv2.JoinMarshalers(Strings[string](), Strings[name]())),
	)
	for _, s := range []string{"", "plain", `q"uo\te`, "tab\tnl\nret\r", "\x00\x01\x1f\x7f", "<&>", "é ü 日本", "\u2028\u2029", "a\u2028b", "bad\xffutf8", "\xff\xfe", "\b\f"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		got, err := jsonv2.Marshal(doc{S: s, N: name(s), Extra: jsontext.Value(`{"raw":"x` + "\u2028" + `\u00e9"}`)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if w := `{"s":` + want + `,"n":` + want + `,"raw":"x` + "\u2028" + `\u00e9"}`; string(got) != w {
			t.Errorf("%q:\n got %s\nwant %s", s, got, w)
		}
	}
}

// FuzzAppendQuote: AppendQuote writes any string as encoding/json does
// (HTML escaping off), which is what it promises.
func FuzzAppendQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\u2028", "bad\xff", "\x00\x7f", "é日本😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendQuote([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendQuote(%q) = %s, want %s", s, got, want)
		}
	})
}
