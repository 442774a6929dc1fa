package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/custodian-dev/custodian/reason"
)

// Seal sets r.Prev to prev and r.Hash to the hash of the record's line, and
// returns the line (with its trailing newline) to append to the journal.
func (r *Record) Seal(prev string) ([]byte, error) {
	r.Prev = prev
	r.Hash = ""
	r.Time = r.Time.UTC()
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode journal record %d: %w", r.Rev, err)
	}
	r.Hash = HashBytes(body)
	line, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode journal record %d: %w", r.Rev, err)
	}
	return append(line, '\n'), nil
}

// DecodeRecord parses one journal line (without its newline) and checks that
// the record's hash matches its content. It does not check the link to the
// previous record: see Chain.
func DecodeRecord(line []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("journal record: %w", err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("journal record: trailing data")
	}
	if r.Rev == 0 {
		return Record{}, fmt.Errorf("journal record: revision 0")
	}
	c := r
	c.Hash = ""
	body, err := json.Marshal(&c)
	if err != nil {
		return Record{}, fmt.Errorf("journal record %d: %w", r.Rev, err)
	}
	if got := HashBytes(body); got != r.Hash {
		return Record{}, fmt.Errorf("journal record %d: hash mismatch (recorded %s, computed %s)", r.Rev, short(r.Hash), short(got))
	}
	return r, nil
}

// Chain checks that next follows prev: contiguous revision and hash link.
// prev is nil for the first record.
func Chain(prev *Record, next Record) error {
	wantRev, wantPrev := uint64(1), ""
	if prev != nil {
		wantRev, wantPrev = prev.Rev+1, prev.Hash
	}
	if next.Rev != wantRev {
		return reason.New(reason.CorruptState, "journal revision %d follows revision %d", next.Rev, wantRev-1)
	}
	if next.Prev != wantPrev {
		return reason.New(reason.CorruptState, "journal hash chain broken at revision %d", next.Rev)
	}
	return nil
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}
