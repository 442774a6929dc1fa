package jsonval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// DiffTrees returns the RFC 6902 patch turning from into to (decoded trees;
// nil for a missing document). Objects are compared key by key, arrays
// index by index; values in the patch are in canonical form.
func DiffTrees(from, to any) (json.RawMessage, error) {
	var ops []op
	var err error
	if from == nil && to != nil {
		v, err := CanonicalJSON(to)
		if err != nil {
			return nil, err
		}
		ops = []op{{Op: "add", Path: "", Value: v}}
	} else if ops, err = diffTrees("", from, to, nil); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	if len(ops) == 0 {
		return json.RawMessage("[]"), nil
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	return b, nil
}

// op is one RFC 6902 operation (without from: neither DiffTrees nor
// ApplyPatch reads or writes one).
type op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Diff returns the RFC 6902 patch turning raw value a into raw value b; nil
// stands for a missing document.
func Diff(a, b []byte) (json.RawMessage, error) {
	var ta, tb any
	var err error
	if a != nil {
		if ta, err = Decode(a); err != nil {
			return nil, reason.New(reason.InvalidInput, "malformed JSON: %v", err)
		}
	}
	if b != nil {
		if tb, err = Decode(b); err != nil {
			return nil, reason.New(reason.InvalidInput, "malformed JSON: %v", err)
		}
	}
	return DiffTrees(ta, tb)
}

// diffTrees appends to ops the operations turning a into b at path.
func diffTrees(path string, a, b any, ops []op) ([]op, error) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		// Only the keys that changed are sorted (for a deterministic patch),
		// not the whole object.
		type group struct {
			key string
			ops []op
		}
		var groups []group
		for k, aval := range av {
			p := path + "/" + escapePointer(k)
			if bval, ok := bv[k]; ok {
				sub, err := diffTrees(p, aval, bval, nil)
				if err != nil {
					return nil, err
				}
				if len(sub) > 0 {
					groups = append(groups, group{k, sub})
				}
			} else {
				groups = append(groups, group{k, []op{{Op: "remove", Path: p}}})
			}
		}
		for k, bval := range bv {
			if _, ok := av[k]; !ok {
				v, err := CanonicalJSON(bval)
				if err != nil {
					return nil, err
				}
				groups = append(groups, group{k, []op{{Op: "add", Path: path + "/" + escapePointer(k), Value: v}}})
			}
		}
		slices.SortFunc(groups, func(x, y group) int { return strings.Compare(x.key, y.key) })
		for _, g := range groups {
			ops = append(ops, g.ops...)
		}
		return ops, nil
	case []any:
		ba, ok := b.([]any)
		if !ok {
			break
		}
		n := min(len(av), len(ba))
		var err error
		for i := 0; i < n; i++ {
			if ops, err = diffTrees(path+"/"+strconv.Itoa(i), av[i], ba[i], ops); err != nil {
				return nil, err
			}
		}
		for i := len(av) - 1; i >= n; i-- {
			ops = append(ops, op{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
		for i := n; i < len(ba); i++ {
			v, err := CanonicalJSON(ba[i])
			if err != nil {
				return nil, err
			}
			ops = append(ops, op{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: v})
		}
		return ops, nil
	default:
		if a == b { // a is a scalar: == compares the values, whatever b is
			return ops, nil
		}
	}
	v, err := CanonicalJSON(b)
	if err != nil {
		return nil, err
	}
	return append(ops, op{Op: "replace", Path: path, Value: v}), nil
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
