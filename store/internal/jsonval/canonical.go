package jsonval

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writeCanonical writes v — a tree decoded by decode (maps, slices,
// strings, json.Number, bools, nil) — as compact JSON with object keys
// sorted, byte for byte what encoding/json.Marshal writes for the same tree,
// without its reflection.
func writeCanonical(w *bufio.Writer, v any) error {
	c := canonWriter{w: w}
	return c.write(v)
}

// canonWriter is writeCanonical's state: the member names of the objects
// being written, outermost first, each object's sorted, in one slice reused
// from object to object (not a slice allocated per object).
type canonWriter struct {
	w    *bufio.Writer
	keys []string
}

func (c *canonWriter) write(v any) error {
	w := c.w
	switch x := v.(type) {
	case nil:
		w.WriteString("null")
	case bool:
		w.WriteString(strconv.FormatBool(x))
	case json.Number:
		w.WriteString(string(x))
	case string:
		writeString(w, x)
	case map[string]any:
		base := len(c.keys)
		for k := range x {
			c.keys = append(c.keys, k)
		}
		slices.Sort(c.keys[base:])
		w.WriteByte('{')
		for i := base; i < base+len(x); i++ {
			if i > base {
				w.WriteByte(',')
			}
			k := c.keys[i] // by index: writing a member's value may grow the slice
			writeString(w, k)
			w.WriteByte(':')
			if err := c.write(x[k]); err != nil {
				return err
			}
		}
		c.keys = c.keys[:base]
		w.WriteByte('}')
	case []any:
		w.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := c.write(e); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("canonical form: %w", err)
		}
		w.Write(b)
	}
	return nil
}

// writeString writes s as encoding/json does (HTML-safe escaping, invalid
// UTF-8 replaced); plain ASCII takes the fast path.
func writeString(w *bufio.Writer, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			b, _ := json.Marshal(s)
			w.Write(b)
			return
		}
	}
	w.WriteByte('"')
	w.WriteString(s)
	w.WriteByte('"')
}

// canonicalSum is the SHA-256 of v's canonical form: compact JSON with
// object keys sorted (what encoding/json produces from maps).
func canonicalSum(v any) (string, error) {
	h := sha256.New()
	w := bufio.NewWriterSize(h, 32<<10)
	if err := writeCanonical(w, v); err != nil {
		return "", err
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CanonicalJSON is the canonical form of a decoded tree (see SumOf).
func CanonicalJSON(v any) ([]byte, error) {
	var sb strings.Builder
	w := bufio.NewWriter(&sb)
	if err := writeCanonical(w, v); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return []byte(sb.String()), nil
}

// diffTrees appends to ops the operations turning a into b at path.
func diffTrees(path string, a, b any, ops []Op) ([]Op, error) {
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
			ops []Op
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
				groups = append(groups, group{k, []Op{{Op: "remove", Path: p}}})
			}
		}
		for k, bval := range bv {
			if _, ok := av[k]; !ok {
				v, err := CanonicalJSON(bval)
				if err != nil {
					return nil, err
				}
				groups = append(groups, group{k, []Op{{Op: "add", Path: path + "/" + escapePointer(k), Value: v}}})
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
			ops = append(ops, Op{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
		for i := n; i < len(ba); i++ {
			v, err := CanonicalJSON(ba[i])
			if err != nil {
				return nil, err
			}
			ops = append(ops, Op{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: v})
		}
		return ops, nil
	default:
		if scalarEqual(a, b) {
			return ops, nil
		}
	}
	v, err := CanonicalJSON(b)
	if err != nil {
		return nil, err
	}
	return append(ops, Op{Op: "replace", Path: path, Value: v}), nil
}

func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	}
	return false
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// SumCache makes canonical sums of successive versions of one document
// cheap to compute: it remembers, by identity, the canonical form of each
// container two levels under the root (the elements of the root's arrays
// and objects, such as the ASDD manifest's slices and heartbeats). Trees
// made by PatchTree share every container a patch did not touch with the
// tree they came from, so the next sum re-encodes only what changed (the
// SHA-256 still reads the whole canonical form). Trees must not be changed
// in place once summed. A SumCache is for one goroutine at a time; its zero
// value is ready to use.
type SumCache struct {
	memo map[memoKey]memoEntry
	h    hash.Hash
	w    *bufio.Writer // onto h, kept: a replay sums once per record
}

type memoKey struct {
	p uintptr // the container's address (kept alive by its memoEntry)
	n int
}

type memoEntry struct {
	obj any // keeps the container alive, so its address is not reused
	b   []byte
}

// Sum returns the canonical sum of tree, as SumTree does.
func (c *SumCache) Sum(tree any) (string, error) {
	next := make(map[memoKey]memoEntry, len(c.memo))
	if c.w == nil {
		c.h = sha256.New()
		c.w = bufio.NewWriterSize(c.h, 64<<10)
	}
	h, w := c.h, c.w
	h.Reset()
	w.Reset(h)
	if err := c.write(w, tree, 0, next); err != nil {
		return "", err
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	c.memo = next
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func (c *SumCache) write(w *bufio.Writer, v any, depth int, next map[memoKey]memoEntry) error {
	switch x := v.(type) {
	case map[string]any:
		if depth == 2 {
			return c.memoized(w, x, memoKey{reflect.ValueOf(x).Pointer(), len(x)}, next)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, k)
			w.WriteByte(':')
			if err := c.write(w, x[k], depth+1, next); err != nil {
				return err
			}
		}
		w.WriteByte('}')
		return nil
	case []any:
		if depth == 2 && len(x) > 0 {
			return c.memoized(w, x, memoKey{reflect.ValueOf(x).Pointer(), len(x)}, next)
		}
		w.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := c.write(w, e, depth+1, next); err != nil {
				return err
			}
		}
		w.WriteByte(']')
		return nil
	}
	return writeCanonical(w, v)
}

func (c *SumCache) memoized(w *bufio.Writer, v any, k memoKey, next map[memoKey]memoEntry) error {
	if e, ok := c.memo[k]; ok {
		next[k] = e
		w.Write(e.b)
		return nil
	}
	var sb strings.Builder
	bw := bufio.NewWriter(&sb)
	if err := writeCanonical(bw, v); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	b := []byte(sb.String())
	next[k] = memoEntry{obj: v, b: b}
	w.Write(b)
	return nil
}
