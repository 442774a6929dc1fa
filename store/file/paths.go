package file

import (
	"path"
	"strings"
)

// paths are the files of one document, relative to the project root, in
// slash form (os.Root accepts them on every platform we support).
type paths struct {
	key, dir, snap, tmp, journal, lock, marks string
}

func pathsFor(key string) paths {
	dir, base := path.Split(key)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	stem := strings.TrimSuffix(base, ".json")
	p := paths{key: key, dir: dir, snap: key, tmp: key + ".tmp"}
	if base == "manifest.json" {
		p.journal = path.Join(dir, "journal.ndjson")
		p.lock = path.Join(dir, ".lock")
		p.marks = path.Join(dir, ".marks")
	} else {
		p.journal = path.Join(dir, stem+".journal.ndjson")
		p.lock = path.Join(dir, "."+stem+".lock")
		p.marks = path.Join(dir, "."+stem+".marks")
	}
	return p
}

// keyForJournal maps a journal file name back to its document's key.
func keyForJournal(rel string) (string, bool) {
	dir, base := path.Split(rel)
	switch {
	case base == "journal.ndjson":
		return dir + "manifest.json", true
	case strings.HasSuffix(base, ".journal.ndjson") && len(base) > len(".journal.ndjson"):
		return dir + strings.TrimSuffix(base, ".journal.ndjson") + ".json", true
	}
	return "", false
}
