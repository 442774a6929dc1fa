package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/internal/jsonenc"
	"github.com/custodian-dev/custodian/reason"
)

// Seal sets r.Prev to prev and r.Hash to the hash of the record's line, and
// returns the line (with its trailing newline) to append to the journal.
func (r *Record) Seal(prev string) ([]byte, error) {
	return r.SealTo(nil, prev)
}

// SealTo is Seal appending the line to b (a batch of lines in one buffer).
func (r *Record) SealTo(b []byte, prev string) ([]byte, error) {
	return r.SealMAC(b, prev, nil)
}

// SealMAC is SealTo that, with a key, also authenticates the record: its
// MAC is the HMAC-SHA256 under key of the line with mac and hash empty,
// and the hash then covers the line with the MAC in it.
func (r *Record) SealMAC(b []byte, prev string, key []byte) ([]byte, error) {
	r.Prev = validUTF8(prev)
	r.Hash = ""
	r.MAC = ""
	r.Time = r.Time.UTC()
	// Invalid UTF-8 would be written as U+FFFD and read back differently,
	// breaking the record's own hash: store what will be read.
	r.Actor, r.Reason, r.Sum = validUTF8(r.Actor), validUTF8(r.Reason), validUTF8(r.Sum)
	for i := range r.Events {
		r.Events[i].Type = validUTF8(r.Events[i].Type)
	}
	// One buffer holds the body and then the line: "hash" is the record's
	// last member, so the line is the body with it filled in.
	size := 256 + len(r.Actor) + len(r.Reason) + len(r.Patch) + len(r.Sum) + len(r.Prev)
	for _, e := range r.Events {
		size += 32 + len(e.Type) + len(e.Data)
	}
	start := len(b)
	b, err := r.encode(slices.Grow(b, size))
	if err != nil {
		return nil, fmt.Errorf("encode journal record %d: %w", r.Rev, err)
	}
	if key != nil {
		// The MAC covers the line without it; the line with it is that
		// line with "mac" inserted before "hash", its last member, as
		// encode writes it: the patch and events are encoded (and
		// checked) once.
		r.MAC = MAC(key, b[start:])
		b = append(b[:len(b)-len(`,"hash":""}`)], `,"mac":`...)
		b = append(jsonenc.String(b, r.MAC), `,"hash":""}`...)
	}
	r.Hash = HashBytes(b[start:])
	b = append(b[:len(b)-len(`""}`)], '"')
	b = append(b, r.Hash...)
	return append(b, "\"}\n"...), nil
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// encode appends the record's JSON to b, byte for byte as json.Marshal
// writes it (the hash is computed over those bytes), without reflection:
// the members that are plain (ASCII strings with nothing to escape, patches
// already compact, as json.Marshal makes them) are copied, anything else
// goes through encoding/json.
func (r *Record) encode(b []byte) ([]byte, error) {
	b = append(b, `{"rev":`...)
	b = strconv.AppendUint(b, r.Rev, 10)
	b = append(b, `,"time":`...)
	t, err := r.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(b, t...)
	if r.Actor != "" {
		b = append(b, `,"actor":`...)
		b = jsonenc.String(b, r.Actor)
	}
	if r.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonenc.String(b, r.Reason)
	}
	b = append(b, `,"patch":`...)
	if b, err = appendRaw(b, r.Patch); err != nil {
		return nil, err
	}
	if len(r.Events) > 0 {
		b = append(b, `,"events":[`...)
		for i, e := range r.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = jsonenc.String(b, e.Type)
			if len(e.Data) > 0 {
				b = append(b, `,"data":`...)
				if b, err = appendRaw(b, e.Data); err != nil {
					return nil, err
				}
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"sum":`...)
	b = jsonenc.String(b, r.Sum)
	b = append(b, `,"prev":`...)
	b = jsonenc.String(b, r.Prev)
	if r.MAC != "" {
		b = append(b, `,"mac":`...)
		b = jsonenc.String(b, r.MAC)
	}
	b = append(b, `,"hash":`...)
	b = jsonenc.String(b, r.Hash)
	return append(b, '}'), nil
}

// MAC is "hmac-sha256:<hex>" of b under key.
func MAC(key, b []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// CheckMAC reports whether the record was sealed with key: it carries a
// MAC and the MAC is right. A record sealed without a key has none.
func (r Record) CheckMAC(key []byte) error {
	if r.MAC == "" {
		return fmt.Errorf("journal record %d carries no MAC", r.Rev)
	}
	c := r
	c.Hash, c.MAC = "", ""
	body, err := c.encode(nil)
	if err != nil {
		return fmt.Errorf("journal record %d: %w", r.Rev, err)
	}
	if !hmac.Equal([]byte(MAC(key, body)), []byte(r.MAC)) {
		return fmt.Errorf("journal record %d: MAC does not match the journal key (the record was made or changed without the key)", r.Rev)
	}
	return nil
}

// appendRaw appends a json.RawMessage as json.Marshal does (compacted, with
// <, >, & and U+2028/2029 escaped); null when empty.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	if marshalChanges(raw) {
		m, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		return append(b, m...), nil
	}
	if !json.Valid(raw) {
		_, err := json.Marshal(raw)
		return nil, err
	}
	return append(b, raw...), nil
}

// marshalChanges reports whether json.Marshal would write raw otherwise
// than as it is: white space between tokens, or a character it escapes
// (<, >, &, U+2028, U+2029). A space inside a string is kept: a patch
// whose values hold words (a slice's name, an artifact's path) took
// json.Marshal's parse and copy, under the daemon's commit lock (2.5% of
// the CPU of bench daemon's real proposals). Invalid JSON gives true or
// false; json.Valid or json.Marshal then refuses it.
func marshalChanges(raw []byte) bool {
	in := false // inside a string
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			in = !in
		case '\\':
			i++ // an escaped character, in a string
		case ' ', '\t', '\n', '\r':
			if !in {
				return true
			}
		case '<', '>', '&':
			return true
		case 0xE2: // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
			if i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9) {
				return true
			}
		}
	}
	return false
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
	body, err := c.encode(nil)
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
