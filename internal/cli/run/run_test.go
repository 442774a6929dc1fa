package run

import (
	"testing"
)

func TestCountWords(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 retries"}, {1, "1 retry"}, {2, "2 retries"}} {
		if got := nOf(tc.n, "retry", "retries"); got != tc.want {
			t.Errorf("nOf(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
