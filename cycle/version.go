package cycle

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a MAJOR.MINOR.PATCH version of a piece of shared context.
type Version struct{ Major, Minor, Patch int }

// FirstVersion is the version a piece of shared context gets when it is
// first written.
var FirstVersion = Version{1, 0, 0}

// ParseVersion parses "MAJOR.MINOR.PATCH" (non-negative decimal numbers,
// no leading zeros, no prefix).
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 9 || (len(p) > 1 && p[0] == '0') {
			return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or +1 as v is lower than, equal to or higher than w.
func (v Version) Compare(w Version) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// NextMinor is the version of a new iteration: 1.0.0 → 1.1.0 → 1.2.0.
func (v Version) NextMinor() Version { return Version{v.Major, v.Minor + 1, 0} }

// NextPatch is the version of an update within an iteration: 1.1.0 → 1.1.1.
func (v Version) NextPatch() Version { return Version{v.Major, v.Minor, v.Patch + 1} }

// bump returns the version after an update of content whose current
// version is cur ("" when the content does not exist yet).
func bumpPatch(cur string) string {
	if cur == "" {
		return FirstVersion.String()
	}
	v, err := ParseVersion(cur)
	if err != nil {
		return FirstVersion.String()
	}
	return v.NextPatch().String()
}

func bumpMinor(cur string) string {
	v, err := ParseVersion(cur)
	if err != nil {
		return FirstVersion.String()
	}
	return v.NextMinor().String()
}
