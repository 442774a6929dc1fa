package jsonval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// canonWriter writes a tree decoded by Decode (maps, slices, strings,
// json.Number, bools, nil) in canonical form: compact JSON with object
// keys sorted, byte for byte what encoding/json.Marshal writes for the same
// tree, without its reflection (BenchmarkParseValue).
type canonWriter struct {
	w *bufio.Writer
	// keys holds the member names of the objects being written, outermost
	// first, each object's sorted, in one slice reused from object to
	// object (not a slice allocated per object).
	keys []string
	// memo and next are a SumCache's: the canonical form of the
	// containers two levels under the root, from the last sum and for
	// this one; nil for a writer without memory.
	memo, next map[memoKey]memoEntry
}

func (c *canonWriter) write(v any, depth int) error {
	w := c.w
	if depth == 2 && c.next != nil {
		if k, ok := keyOf(v); ok {
			return c.memoized(v, k)
		}
	}
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
			if err := c.write(x[k], depth+1); err != nil {
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
			if err := c.write(e, depth+1); err != nil {
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

// canonicalSum is the SHA-256 of v's canonical form.
func canonicalSum(v any) (string, error) { return sumWith(v, nil, nil) }

// sumWith is the canonical sum of v, with a SumCache's memo and next (or
// none).
func sumWith(v any, memo, next map[memoKey]memoEntry) (string, error) {
	h := sha256.New()
	if err := writeCanonical(h, 32<<10, v, memo, next); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CanonicalJSON is the canonical form of a decoded tree (see SumOf).
func CanonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	err := writeCanonical(&buf, 4096, v, nil, nil)
	return buf.Bytes(), err
}

// writeCanonical writes v's canonical form to w through a buffer of size
// bytes, with a SumCache's memo and next (or none).
func writeCanonical(w io.Writer, size int, v any, memo, next map[memoKey]memoEntry) error {
	bw := bufio.NewWriterSize(w, size)
	c := canonWriter{w: bw, memo: memo, next: next}
	if err := c.write(v, 0); err != nil {
		return err
	}
	return bw.Flush()
}

// SumCache makes canonical sums of successive versions of one document
// cheap to compute: it remembers, by identity, the canonical form of each
// container two levels under the root (the elements of the root's arrays
// and objects, such as the ASDD manifest's slices and heartbeats). Trees
// made by PatchTree share every container a patch did not touch with the
// tree they came from, so the next sum re-encodes only what changed (the
// SHA-256 still reads the whole canonical form): a replay of records that
// carry sums is several times faster (BenchmarkReplay1000). Trees must not
// be changed in place once summed. A SumCache is for one goroutine at a
// time; its zero value is ready to use.
type SumCache struct {
	memo map[memoKey]memoEntry
}

type memoKey struct {
	p uintptr // the container's address (kept alive by its memoEntry)
	n int
}

type memoEntry struct {
	obj any // keeps the container alive, so its address is not reused
	b   []byte
}

// keyOf is the memo key of a map or a non-empty slice.
func keyOf(v any) (memoKey, bool) {
	switch x := v.(type) {
	case map[string]any:
		return memoKey{reflect.ValueOf(x).Pointer(), len(x)}, true
	case []any:
		return memoKey{reflect.ValueOf(x).Pointer(), len(x)}, len(x) > 0
	}
	return memoKey{}, false
}

// Sum returns the canonical sum of tree, as SumOf does of its bytes.
func (c *SumCache) Sum(tree any) (string, error) {
	next := make(map[memoKey]memoEntry, len(c.memo))
	sum, err := sumWith(tree, c.memo, next)
	if err != nil {
		return "", err
	}
	c.memo = next
	return sum, nil
}

// memoized writes v, whose memo key is k, from the memo or encoded anew.
func (c *canonWriter) memoized(v any, k memoKey) error {
	e, ok := c.memo[k]
	if !ok {
		b, err := CanonicalJSON(v)
		if err != nil {
			return err
		}
		e = memoEntry{obj: v, b: b}
	}
	c.next[k] = e
	c.w.Write(e.b)
	return nil
}
