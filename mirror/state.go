package mirror

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/custodian-dev/custodian/store"
)

// dirState is the state file of the mirrors of one directory
// (<dir>/.mirror): for each mirrored document, by file name, which
// revision its mirror holds and the SHA-256 of the bytes written for it,
// so that a reader can tell how fresh a mirror is and a writer can tell a
// direct edit from its own write.
type dirState struct {
	Store     string            `json:"store,omitempty"`
	Documents map[string]*State `json:"documents"`
}

// State is one document's entry in its directory's state file.
type State struct {
	Key string `json:"key"`
	// Rev is the revision last written, File the "sha256:<hex>" of the
	// mirror's bytes for it, Written when.
	Rev     uint64    `json:"rev"`
	File    string    `json:"file"`
	Written time.Time `json:"written"`
	// Recent are the writes before it, newest first: a crash between the
	// state file's rename and the mirror's leaves the mirror holding one
	// of them, which is then not mistaken for a direct edit.
	Recent []Mark `json:"recent,omitempty"`
}

// Mark binds the hash of a mirror's bytes to the revision they hold.
type Mark struct {
	Rev  uint64 `json:"rev"`
	File string `json:"file"`
}

// keepRecent is how many earlier writes a state file remembers.
const keepRecent = 3

// holds returns the revision whose bytes hash to h, by the state file.
func (s *State) holds(h string) (uint64, bool) {
	if s == nil {
		return 0, false
	}
	if s.File == h {
		return s.Rev, true
	}
	for _, r := range s.Recent {
		if r.File == h {
			return r.Rev, true
		}
	}
	return 0, false
}

// recent is the Recent of the state that follows s.
func (s *State) recent() []Mark {
	out := append([]Mark{{Rev: s.Rev, File: s.File}}, s.Recent...)
	if len(out) > keepRecent {
		out = out[:keepRecent]
	}
	return out
}

// paths are the files of one mirror, relative to the project root.
type paths struct {
	key, dir string
	file     string // the mirror: the document's usual path
	state    string // its directory's state file
}

func pathsFor(key string) paths {
	dir := path.Dir(key)
	return paths{key: key, dir: dir, file: key, state: statePath(dir)}
}

// statePath is the state file of the mirrors in dir: <dir>/.mirror (after
// the file store's .lock and .marks beside a manifest.json).
func statePath(dir string) string { return path.Join(dir, ".mirror") }

// lockPath is the lock file the writers of the mirrors in dir take.
func lockPath(dir string) string { return path.Join(dir, ".mirror.lock") }

// StatePath is the state file of key's mirror, relative to the project
// root (.asdd/state/.mirror for the ASDD manifest); its entry for key is
// under "documents" by file name.
func StatePath(key string) string { return pathsFor(key).state }

// Status is what a project's disk says about one mirror.
type Status struct {
	Key string `json:"key"`
	// Rev is the revision the mirror file holds (0: none, or not known).
	Rev uint64 `json:"rev"`
	// Written is when that revision was written.
	Written time.Time `json:"written,omitzero"`
	// State: "ok", "missing" (no mirror file), "edited" (the file is not
	// what was written for any recent revision), "untracked" (a file with
	// no state file).
	State string `json:"state"`
}

// Read reports the mirror of key in the project at dir, from the disk
// alone (it takes no lock: a write in progress shows as the revision
// before it or after it, never as an edit).
func Read(dir, key string) (Status, error) {
	if err := store.CheckKey(key); err != nil {
		return Status{}, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return Status{}, err
	}
	defer r.Close()
	m := &Mirror{root: r, dir: dir}
	var out Status
	// A reader outpaced by several writes (the state file remembers a
	// few) looks again.
	for range 3 {
		if out, err = m.read(key); err != nil || out.State != "edited" {
			break
		}
	}
	return out, err
}

func (m *Mirror) read(key string) (Status, error) {
	p := pathsFor(key)
	// The mirror first, then its state file: a writer renames the state
	// file first, so the state read names whatever mirror was read (the
	// new revision, or the old one in its recent list).
	cur, err := m.readFile(p.file)
	if err != nil {
		return Status{}, err
	}
	ds, err := m.readDirState(p.dir)
	if err != nil {
		return Status{}, err
	}
	st := ds.Documents[path.Base(key)]
	if st != nil && st.Key != key {
		st = nil
	}
	out := Status{Key: key}
	switch {
	case cur == nil:
		out.State = "missing"
	case st == nil:
		out.State = "untracked"
	default:
		rev, ok := st.holds(store.HashBytes(cur))
		if !ok {
			out.State = "edited"
			break
		}
		out.State, out.Rev = "ok", rev
		if rev == st.Rev {
			out.Written = st.Written
		}
	}
	return out, nil
}

// ReadStateFile returns the entry of key in a state file's bytes (for
// tools and tests).
func ReadStateFile(b []byte, key string) (State, error) {
	var ds dirState
	if err := json.Unmarshal(b, &ds); err != nil {
		return State{}, err
	}
	st := ds.Documents[path.Base(key)]
	if st == nil || st.Key != key {
		return State{}, fmt.Errorf("no entry for %s", key)
	}
	return *st, nil
}
