package status

import (
	"testing"
)

func TestUseColor(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		env  map[string]string
		want bool
	}{
		{"terminal", true, nil, true},
		{"pipe", false, nil, false},
		{"terminal with NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, false},
		{"terminal with empty NO_COLOR", true, map[string]string{"NO_COLOR": ""}, true},
		{"dumb terminal", true, map[string]string{"TERM": "dumb"}, false},
		{"pipe with CLICOLOR_FORCE", false, map[string]string{"CLICOLOR_FORCE": "1"}, true},
		{"pipe with CLICOLOR_FORCE=0", false, map[string]string{"CLICOLOR_FORCE": "0"}, false},
		{"NO_COLOR beats CLICOLOR_FORCE", false, map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := useColor(tc.tty, func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("useColor = %v, want %v", got, tc.want)
			}
		})
	}
}
