package testenv

import (
	"testing"
	"time"
)

// The loops run short unless CUSTODIAN_SOAK asks for the full ones.
func TestSoakChoosesTheFullLoops(t *testing.T) {
	for _, tc := range []struct {
		env   string
		soak  bool
		round int
	}{{"", false, 3}, {"0", false, 3}, {"1", true, 30}, {"yes", true, 30}} {
		t.Setenv(SoakEnv, tc.env)
		if Soak() != tc.soak || Rounds(3, 30) != tc.round {
			t.Errorf("%s=%q: soak %v, rounds %d; want %v, %d", SoakEnv, tc.env, Soak(), Rounds(3, 30), tc.soak, tc.round)
		}
		if d := Duration(time.Second, time.Minute); (d == time.Minute) != tc.soak {
			t.Errorf("%s=%q: duration %v", SoakEnv, tc.env, d)
		}
	}
}
