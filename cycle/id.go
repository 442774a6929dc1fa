package cycle

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Dir is the directory, relative to the project root, that holds the cycle
// documents.
const Dir = ".workflow/.cycle"

// TimeLayout is how every timestamp in a cycle document is written: RFC
// 3339, UTC, whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// idStamp is the timestamp inside a cycle id.
const idStamp = "20060102T150405"

// idRandomLen is the length of the random suffix of a new cycle id.
const idRandomLen = 6

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// validID accepts what may name a cycle file: the ids Custodian makes
// (cycle-v1-20260122T020000-k3x9qa) and any other plain name made of
// letters, digits, '-', '_' and '.', as long as it cannot leave the cycle
// directory or collide with the files kept beside the documents.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`) })

// NewID returns a fresh cycle id: cycle-v1-<UTC timestamp>-<6 random
// characters from [a-z0-9]>, the random part read from rnd.
func NewID(now time.Time, rnd io.Reader) (string, error) {
	var b [idRandomLen]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("cycle id: read random: %w", err)
	}
	suffix := make([]byte, idRandomLen)
	for i, c := range b {
		suffix[i] = idAlphabet[int(c)%len(idAlphabet)]
	}
	return "cycle-v1-" + now.UTC().Format(idStamp) + "-" + string(suffix), nil
}

// CheckID returns an INVALID_INPUT error unless id can name a cycle.
func CheckID(id string) error {
	if !validID().MatchString(id) || strings.Contains(id, "..") ||
		strings.HasSuffix(id, ".progress") || strings.HasSuffix(id, ".json") {
		return reason.New(reason.InvalidInput, "%q is not a cycle id (letters, digits, '-', '_' and '.', up to 128 characters, such as cycle-v1-20260122T020000-k3x9qa)", id)
	}
	return nil
}

// Key returns the store key of a cycle's document.
func Key(id string) string { return Dir + "/" + id + ".json" }

// IDFromKey returns the cycle id a store key names, if it names one.
func IDFromKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, Dir+"/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ".json")
	if !ok || CheckID(id) != nil {
		return "", false
	}
	return id, true
}

// ProgressDir returns the directory, relative to the project root, of a
// cycle's progress files (the seed's .progress/ directory, one per cycle:
// .workflow/.cycle/{cycleId}.progress).
func ProgressDir(id string) string { return Dir + "/" + id + ".progress" }

// Stamp formats t as a cycle timestamp (UTC).
func Stamp(t time.Time) string { return t.UTC().Format(TimeLayout) }
