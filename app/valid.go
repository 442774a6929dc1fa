package app

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/store"
)

// Reading the ASDD manifest checks it against its schema (asdd.Decode): on
// a 1,000-slice manifest that check is most of what a CLI command spends
// reading it. Yet the bytes a command reads are, nearly always, the ones
// the previous command committed, and those passed: every operation
// validates what it changes of a manifest that passed before (and a
// generic write validates the whole). So the application layer keeps
// validity marks — the SHA-256 of manifest values that passed (the bytes
// every backend hands over: the snapshot's, in store/file), with the
// asdd.SchemaVersion they passed under — in validFile, and decodes a value
// a mark names without the schema check.
//
// A mark binds the exact value and the version: a manifest edited by a
// single character, written by another tool or release, or read by a
// release whose schema or invariants differ, matches no mark and is
// checked in full (and marked when it passes). The file is a cache: marks
// are true statements whoever writes them and whenever (each names
// content, not a revision), so processes write it without a lock, temp
// file and rename, and one lost, unreadable or absent means only a full
// check. Forging a
// mark takes writing the SHA-256 of a hand-made manifest into that file
// on purpose, as forging the journal takes recomputing its hashes; the
// store moves a snapshot edited behind its back aside before the
// application layer reads anything.
var validFile = path.Join(path.Dir(asdd.Key), ".valid")

// keepValid is how many marks the file keeps.
const keepValid = 4

// validMark says that the manifest value whose bytes' SHA-256 is Bytes
// passed asdd.Validate as Schema names it.
type validMark struct {
	Schema string `json:"schema"`
	Bytes  string `json:"bytes"`
}

// decodeManifest is asdd.Decode of raw, skipping the schema check of a
// value a validity mark names, and marking one that passes it.
func (l *Local) decodeManifest(raw []byte) (*asdd.Manifest, error) {
	if !l.hasRoot() {
		return asdd.Decode(raw)
	}
	m := validMark{Schema: asdd.SchemaVersion(), Bytes: store.HashBytes(raw)}
	if slices.Contains(l.readValid(), m) {
		return asdd.DecodeValid(raw)
	}
	out, err := asdd.Decode(raw)
	if err == nil {
		l.markValid(raw)
	}
	return out, err
}

// readValid returns the validity marks (nil when there are none to go by).
func (l *Local) readValid() []validMark {
	b, err := os.ReadFile(filepath.Join(l.o.Root, filepath.FromSlash(validFile)))
	if err != nil {
		return nil
	}
	var ms []validMark
	if json.Unmarshal(b, &ms) != nil {
		return nil
	}
	return ms
}

// markValid records that raw passed (a mark of this release's schema
// version). Best effort: the directory is not created, and a failure only
// costs the next reader a full check.
func (l *Local) markValid(raw []byte) {
	if !l.hasRoot() || l.o.ReadOnly {
		return
	}
	m := validMark{Schema: asdd.SchemaVersion(), Bytes: store.HashBytes(raw)}
	ms := slices.DeleteFunc(l.readValid(), func(x validMark) bool { return x == m || x.Schema != m.Schema })
	ms = append(ms, m)
	if len(ms) > keepValid {
		ms = ms[len(ms)-keepValid:]
	}
	b, err := json.Marshal(ms)
	if err != nil {
		return
	}
	name := filepath.Join(l.o.Root, filepath.FromSlash(validFile))
	f, err := os.CreateTemp(filepath.Dir(name), ".valid-*.tmp")
	if err != nil {
		return
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Chmod(0o644) // as the store's files: readable by whoever reads the project
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
}
