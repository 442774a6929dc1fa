package store

import (
	"path"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// CheckKey validates a document key: a clean path relative to the project
// root that names a .json file. Violations are INVALID_INPUT errors naming
// the problem. Every backend applies it.
func CheckKey(key string) error {
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
