package file

import (
	"encoding/json"
	"slices"

	"github.com/custodian-dev/custodian/store"
)

// A document's mark file (<dir>/.<name>.marks; .marks beside manifest.json)
// binds the SHA-256 of the last few snapshot files written whose record
// carries no sum (the daemon's, a recovery's rebuild) to their revision
// and its record's hash, so recovery can tell which revision such a
// snapshot holds, as a record's sum does for the others. Whoever writes
// such a snapshot marks it first. A mark is a hint checked against the
// journal: one missing, unreadable or naming another journal's record
// identifies nothing, and a snapshot changed by a byte matches no mark.
// A snapshot nothing names is compared with the journal's replay
// (recoverValue).
type mark struct {
	Rev  uint64 `json:"rev"`
	Hash string `json:"hash"` // the hash of revision Rev's journal record
	File string `json:"file"` // "sha256:<hex>" of the snapshot file's bytes
}

// keepMarks is how many marks the file keeps: the snapshot on disk may be
// any of the last few written if a crash cut a rewrite short (writeMark
// also keeps the mark of the snapshot on disk, however old).
const keepMarks = 4

// readMarks returns the marks, nil when there are none to trust.
func (d *doc) readMarks() []mark {
	var ms []mark
	if b, err := d.readFile(d.p.marks); err != nil || json.Unmarshal(b, &ms) != nil {
		return nil // none, or none to trust
	}
	return ms
}

// markFor returns the revision that the snapshot file whose bytes are
// snap holds according to the marks or the checkpoint, or 0.
func (d *doc) markFor(snap []byte, hashes func(rev uint64) (string, bool)) uint64 {
	ms := d.readMarks()
	if c := d.readCheckpoint(); c != nil {
		// The checkpoint binds its record to the snapshot it saw, as a
		// mark does (a direct commit by model writes no sum).
		ms = append(ms, mark{Rev: c.Rev, Hash: c.Hash, File: c.File})
	}
	file := store.HashBytes(snap)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.File != file || m.Rev == 0 {
			continue
		}
		if h, ok := hashes(m.Rev); ok && h == m.Hash {
			return m.Rev
		}
	}
	return 0
}

// writeMark adds m to the mark file durably (temp, fsync, rename, directory
// fsync), keeping the last keepMarks, and always the mark that names the
// snapshot on disk (d.snap.mark): rewrites that failed after writing their
// mark never push it out.
func (d *doc) writeMark(m mark) error {
	ms, kept := append(d.readMarks(), m), []mark{}
	for i, x := range ms {
		last := !slices.ContainsFunc(ms[i+1:], func(y mark) bool { return y.File == x.File })
		if i >= len(ms)-keepMarks || d.snap.mark != "" && x.File == d.snap.mark && last {
			kept = append(kept, x)
		}
	}
	b, _ := json.Marshal(kept) // strings and numbers: it cannot fail
	return d.replaceFile(d.p.marks, d.p.marks+".tmp", "marks", writing(append(b, '\n')), nil)
}
