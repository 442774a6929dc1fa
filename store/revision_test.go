package store_test

import (
	"testing"

	"github.com/custodian-dev/custodian/store"
)

func TestStampRevisionSetsOnlyATopLevelNumericRevision(t *testing.T) {
	for _, c := range []struct {
		in, want string
		changed  bool
	}{
		{`{"a":1,"revision":3,"b":{"revision":9}}`, `{"a":1,"revision":7,"b":{"revision":9}}`, true},
		{"{\n  \"revision\": 12\n}\n", "{\n  \"revision\": 7\n}\n", true},
		{`{"revision":7}`, `{"revision":7}`, false},
		{`{"b":{"revision":1}}`, `{"b":{"revision":1}}`, false},
		{`{"revision":"7x"}`, `{"revision":"7x"}`, false},
		{`[{"revision":1}]`, `[{"revision":1}]`, false},
		{`{"revision":`, `{"revision":`, false},
		{`{"x":"\"revision\"","revision":0.5}`, `{"x":"\"revision\"","revision":7}`, true},
	} {
		got, changed := store.StampRevision([]byte(c.in), 7)
		if string(got) != c.want || changed != c.changed {
			t.Errorf("StampRevision(%s) = %s, %v; want %s, %v", c.in, got, changed, c.want, c.changed)
		}
	}
}
