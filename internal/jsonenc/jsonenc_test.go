package jsonenc

import (
	"encoding/json"
	"testing"
)

func FuzzStringMatchesMarshal(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote\`, "<a&b>", "tab\there", "\u2028", "é", "\xff\xfe", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("String(%q) = %s, json.Marshal %s", s, got, want)
		}
	})
}

func TestValueMatchesMarshal(t *testing.T) {
	for _, v := range []any{nil, "x<y", true, false, 0, -7, int64(1 << 40), uint64(1 << 63), 0.5, 1e21, []string{"a"}, map[string]any{"b": 1, "a": "x"}} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Value(nil, v)
		if err != nil || string(got) != string(want) {
			t.Errorf("Value(%#v) = %s, %v; json.Marshal %s", v, got, err, want)
		}
	}
	if _, err := Value(nil, make(chan int)); err == nil {
		t.Error("a channel encoded")
	}
}
