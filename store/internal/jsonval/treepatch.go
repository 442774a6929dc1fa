package jsonval

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// PatchTree applies an RFC 6902 patch of add, replace and remove operations
// to a decoded tree (as ParseValue makes it) and returns the new tree.
// Containers of tree along each path are copied, never changed, so tree
// stays as it was and the result shares everything the patch did not
// touch: the cost is that of the patch, not of the document
// (BenchmarkReplay1000). It refuses (with an error, so the caller can fall
// back to ApplyPatch) other operations, whole-document operations, and
// values over the limits. It reads an operation's members as the patch
// library does: named exactly op, path and value, others ignored.
func PatchTree(tree any, patch []byte, lim Limits) (any, error) {
	if tree == nil {
		return nil, errors.New("patch: no document to patch")
	}
	if len(patch) > lim.maxBytes() {
		return nil, fmt.Errorf("patch is %d bytes, over the limit of %d bytes", len(patch), lim.maxBytes())
	}
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	for _, m := range ops {
		var op, path string
		if err := json.Unmarshal(m["op"], &op); err != nil {
			return nil, fmt.Errorf("patch: op: %w", err)
		}
		if err := json.Unmarshal(m["path"], &path); err != nil {
			return nil, fmt.Errorf("patch: path: %w", err)
		}
		if path == "" || path[0] != '/' {
			return nil, fmt.Errorf("patch: path %q is not a member", path)
		}
		segs := strings.Split(path[1:], "/")
		for i, s := range segs {
			segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		}
		var val any
		switch op {
		case "add", "replace":
			raw, ok := m["value"]
			if !ok {
				return nil, fmt.Errorf("patch: %s %s without a value", op, path)
			}
			d, err := Depth(raw)
			if err != nil {
				return nil, fmt.Errorf("patch: %w", err)
			}
			if d+len(segs) > lim.maxDepth() {
				return nil, fmt.Errorf("patch: JSON nested over the limit of %d at %s", lim.maxDepth(), path)
			}
			if val, err = Decode(raw); err != nil {
				return nil, fmt.Errorf("patch: %s: %w", path, err)
			}
		case "remove":
		default:
			return nil, fmt.Errorf("patch: operation %q not applied to trees", op)
		}
		next, err := patchAt(tree, segs, op, val)
		if err != nil {
			return nil, fmt.Errorf("patch: %s %s: %w", op, path, err)
		}
		tree = next
	}
	return tree, nil
}

// patchAt returns a copy of node with the operation applied at segs: the
// containers along the path are copied, the rest shared.
func patchAt(node any, segs []string, op string, val any) (any, error) {
	key, last := segs[0], len(segs) == 1
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[key]
		if !ok && (!last || op != "add") {
			return nil, fmt.Errorf("no member %q", key)
		}
		c := maps.Clone(n)
		switch {
		case !last:
			nc, err := patchAt(child, segs[1:], op, val)
			if err != nil {
				return nil, err
			}
			c[key] = nc
		case op == "remove":
			delete(c, key)
		default:
			c[key] = val
		}
		return c, nil
	case []any:
		i, err := arrayIndex(key, len(n))
		if err != nil {
			return nil, err
		}
		if last && op == "add" {
			if i > len(n) {
				return nil, fmt.Errorf("index %d past the end (%d)", i, len(n))
			}
			return slices.Insert(slices.Clone(n), i, val), nil
		}
		if i >= len(n) {
			return nil, fmt.Errorf("index %d past the end (%d)", i, len(n))
		}
		c := slices.Clone(n)
		switch {
		case !last:
			if c[i], err = patchAt(n[i], segs[1:], op, val); err != nil {
				return nil, err
			}
		case op == "remove":
			c = slices.Delete(c, i, i+1)
		default:
			c[i] = val
		}
		return c, nil
	}
	return nil, fmt.Errorf("%q is not in an object or array", key)
}

// arrayIndex reads an array index of a patch's path in an array of n
// elements ("-": n).
func arrayIndex(key string, n int) (int, error) {
	if key == "-" {
		return n, nil
	}
	v, err := strconv.Atoi(key)
	if err != nil || v < 0 || (key != "0" && key[0] == '0') {
		return 0, fmt.Errorf("bad array index %q", key)
	}
	return v, nil
}
