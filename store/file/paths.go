package file

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// paths are the files of one document, relative to the project root, in
// slash form (os.Root accepts them on every platform we support).
type paths struct {
	// head is the anchor (anchor.go), checkpoint the checkpoint (checkpoint.go).
	key, dir, snap, tmp, journal, lock, marks, head, checkpoint string
	// coopLock is a lock file that other tools take around their own
	// writes of the snapshot ("" for none): the state-manager plugins
	// hold flock(2) on .agents/tmp/state.json.lock while they rewrite
	// state.json, so the custodian holds it too while it commits and
	// rewrites that snapshot, and such tools never interleave with it.
	coopLock  string
	segPrefix string // the segments' base names up to their revisions: "journal.", "<stem>.journal."
}

func pathsFor(key string) paths {
	dir, base := path.Split(key)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	// <stem>.journal.ndjson and .<stem>.lock, .<stem>.marks, ... beside
	// <stem>.json; journal.ndjson and .lock, .marks, ... beside
	// manifest.json.
	journal, hidden := strings.TrimSuffix(base, ".json")+".journal.ndjson", "."+strings.TrimSuffix(base, "json")
	if base == "manifest.json" {
		journal, hidden = "journal.ndjson", "."
	}
	p := paths{key: key, dir: dir, snap: key, tmp: key + ".tmp", journal: path.Join(dir, journal),
		lock: path.Join(dir, hidden+"lock"), marks: path.Join(dir, hidden+"marks"),
		head: path.Join(dir, hidden+"head"), checkpoint: path.Join(dir, hidden+"checkpoint")}
	p.segPrefix = strings.TrimSuffix(journal, "ndjson")
	if key == ".agents/tmp/state.json" {
		p.coopLock = key + ".lock"
	}
	return p
}

// segDigits is the least number of digits of a revision in a segment's
// name (zero-padded, so that names sort by revision up to 10^12).
const segDigits = 12

// segmentName is the name of the sealed segment holding revisions from to
// to of the journal at p.journal.
func (p paths) segmentName(from, to uint64) string {
	return path.Join(p.dir, fmt.Sprintf("%s%0*d-%0*d.ndjson", p.segPrefix, segDigits, from, segDigits, to))
}

// parseSegmentName reads the revision range of a sealed segment's base
// name with the given prefix ("journal." or "<stem>.journal."): the rest
// must be <from>-<to>.ndjson with 12 to 20 digits each and 1 <= from <= to.
// No live journal's name has this form (they end in "journal.ndjson"), so
// a segment is never mistaken for another document's journal.
func parseSegmentName(base, prefix string) (from, to uint64, ok bool) {
	rest, okPrefix := strings.CutPrefix(base, prefix)
	rest, okSuffix := strings.CutSuffix(rest, ".ndjson")
	a, b, okDash := strings.Cut(rest, "-")
	digits := func(s string) bool { return len(s) >= segDigits && len(s) <= 20 && strings.Trim(s, "0123456789") == "" }
	if !okPrefix || !okSuffix || !okDash || !digits(a) || !digits(b) {
		return 0, 0, false
	}
	from, errA := strconv.ParseUint(a, 10, 64)
	to, errB := strconv.ParseUint(b, 10, 64)
	return from, to, errA == nil && errB == nil && from >= 1 && from <= to
}

// keyForJournal maps a journal file name, live or sealed segment, back to
// its document's key.
func keyForJournal(rel string) (string, bool) {
	dir, base := path.Split(rel)
	stem, ok := strings.CutSuffix(base, "journal.ndjson") // "" or "<stem>."
	if !ok {
		// A segment: <stem>.journal.<from>-<to>.ndjson, or journal.<from>-<to>.ndjson.
		i := strings.LastIndex(base, "journal.")
		if i < 0 {
			return "", false
		}
		if _, _, ok := parseSegmentName(base[i:], "journal."); !ok {
			return "", false
		}
		stem = base[:i]
	}
	if stem == "" {
		return dir + "manifest.json", true
	}
	if s, ok := strings.CutSuffix(stem, "."); ok && s != "" {
		return dir + s + ".json", true
	}
	return "", false
}

// keyForAnchor maps an anchor file's name (.head, .<stem>.head) back to
// its document's key.
func keyForAnchor(rel string) (string, bool) {
	dir, base := path.Split(rel)
	if base == ".head" {
		return dir + "manifest.json", true
	}
	stem, ok := strings.CutSuffix(base, ".head")
	if !ok || !strings.HasPrefix(stem, ".") || len(stem) < 2 {
		return "", false
	}
	return dir + stem[1:] + ".json", true
}
