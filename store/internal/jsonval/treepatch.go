package jsonval

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// PatchTree applies an RFC 6902 patch of add, replace and remove operations
// to a decoded tree (as ParseValue makes it) and returns the new tree.
// Containers of tree along each path are copied (once per call), never
// changed, so tree stays as it was and the result shares everything the
// patch did not touch: the cost is that of the patch, not of the document
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
	fresh := made{}
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
		next, err := fresh.patchAt(tree, segs, op, val)
		if err != nil {
			return nil, fmt.Errorf("patch: %s %s: %w", op, path, err)
		}
		tree = next
	}
	return tree, nil
}

// patchAt returns a copy of node with the operation applied at segs.
// made holds the containers one PatchTree call made (copies along its
// operations' paths): a later operation of the same patch changes them in
// place instead of copying them again (a heartbeat's patch replaces
// /revision and adds /agent_heartbeats/NAME: the root is copied once, not
// twice). Containers of the input tree or of a patch's values are never in
// it; its keys keep the containers alive, so an address is never reused
// during the call.
type made map[uintptr]any

// has reports whether container c (a map or a non-empty slice) is one
// this call made.
func (m made) has(c any) bool {
	_, ok := m[reflect.ValueOf(c).Pointer()]
	return ok
}

// add records c as made by this call.
func (m made) add(c any) { m[reflect.ValueOf(c).Pointer()] = c }

func (m made) patchAt(node any, segs []string, op string, val any) (any, error) {
	key, last := segs[0], len(segs) == 1
	switch n := node.(type) {
	case map[string]any:
		child, ok := n[key]
		c := n
		if !m.has(n) {
			c = make(map[string]any, len(n)+1)
			for k, v := range n {
				c[k] = v
			}
			m.add(c)
		}
		if last {
			switch {
			case op == "add":
				c[key] = val
			case !ok:
				return nil, fmt.Errorf("no member %q", key)
			case op == "replace":
				c[key] = val
			default:
				delete(c, key)
			}
			return c, nil
		}
		if !ok {
			return nil, fmt.Errorf("no member %q", key)
		}
		nc, err := m.patchAt(child, segs[1:], op, val)
		if err != nil {
			return nil, err
		}
		c[key] = nc
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
			c := make([]any, 0, len(n)+1)
			c = append(c, n[:i]...)
			c = append(c, val)
			return append(c, n[i:]...), nil
		}
		if i >= len(n) {
			return nil, fmt.Errorf("index %d past the end (%d)", i, len(n))
		}
		if last && op == "remove" {
			c := make([]any, 0, len(n)-1)
			c = append(c, n[:i]...)
			return append(c, n[i+1:]...), nil
		}
		c := n
		if !m.has(n) {
			c = make([]any, len(n))
			copy(c, n)
			m.add(c)
		}
		if last {
			c[i] = val
			return c, nil
		}
		nc, err := m.patchAt(n[i], segs[1:], op, val)
		if err != nil {
			return nil, err
		}
		c[i] = nc
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
