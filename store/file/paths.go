package file

import (
	"path"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// paths are the files of one document, relative to the project root, in
// slash form (os.Root accepts them on every platform we support).
type paths struct {
	key, dir, snap, tmp, journal, lock string
}

// checkKey validates a document key: a clean relative path inside the root
// that names a .json file.
func checkKey(key string) error {
	switch {
	case key == "":
		return reason.New(reason.InvalidInput, "empty document key")
	case strings.ContainsRune(key, 0):
		return reason.New(reason.InvalidInput, "document key %q contains a NUL byte", key)
	case strings.HasPrefix(key, "/") || (len(key) > 1 && key[1] == ':'):
		return reason.New(reason.InvalidInput, "document key %q is absolute: keys are paths relative to the project root", key)
	case strings.Contains(key, "\\"):
		return reason.New(reason.InvalidInput, "document key %q: use forward slashes", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == ".." {
			return reason.New(reason.InvalidInput, "document key %q leaves the project root", key)
		}
	}
	if path.Clean(key) != key {
		return reason.New(reason.InvalidInput, "document key %q is not a clean path (want %q)", key, path.Clean(key))
	}
	if !strings.HasSuffix(key, ".json") || len(key) == len(".json") || strings.HasSuffix(key, "/.json") {
		return reason.New(reason.InvalidInput, "document key %q must name a .json file", key)
	}
	return nil
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
	} else {
		p.journal = path.Join(dir, stem+".journal.ndjson")
		p.lock = path.Join(dir, "."+stem+".lock")
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
