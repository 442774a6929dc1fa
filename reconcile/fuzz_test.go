package reconcile

import (
	"bytes"
	"crypto/sha256"
	"path"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"a.md", ".asdd/specs/auth/intent.md", "../../etc/passwd", "/etc/passwd", "a/../b", "./a//b/", "C:/x", "c:x", `a\..\b`, "a\x00b", ".", "", "..", "...", "a/..b", "a/.../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := CleanPath(p)
		if err != nil {
			if c != "" {
				t.Fatalf("rejected %q but returned %q", p, c)
			}
			return
		}
		switch {
		case c == "" || c == ".":
			t.Fatalf("%q accepted as %q", p, c)
		case path.IsAbs(c) || hasDrive(c):
			t.Fatalf("%q accepted as absolute %q", p, c)
		case path.Clean(c) != c:
			t.Fatalf("%q accepted as unclean %q", p, c)
		case strings.ContainsAny(c, "\x00\\"):
			t.Fatalf("%q accepted with a NUL or backslash: %q", p, c)
		}
		for _, part := range strings.Split(c, "/") {
			if part == ".." {
				t.Fatalf("%q accepted with a .. component: %q", p, c)
			}
		}
		if again, err := CleanPath(c); err != nil || again != c {
			t.Fatalf("CleanPath not idempotent on %q: %q, %v", c, again, err)
		}
	})
}

func FuzzParseHash(f *testing.F) {
	f.Add(FormatHash(sha256.Sum256([]byte("x"))))
	f.Add("sha256:" + strings.Repeat("A", 64))
	f.Add("sha256:")
	f.Add("md5:00")
	f.Fuzz(func(t *testing.T, h string) {
		sum, err := ParseHash(h)
		if err != nil {
			return
		}
		if FormatHash(sum) != h {
			t.Fatalf("ParseHash(%q) accepted a non-canonical hash (formats as %q)", h, FormatHash(sum))
		}
	})
}

func FuzzDecodeCache(f *testing.F) {
	c := &Cache{m: map[string]cacheEntry{
		"a.md":             {Key: statKey{Size: 3, Mtime: 1, Ctime: -2, Ino: 4, Dev: 5}, Sum: sha256.Sum256([]byte("a"))},
		".asdd/specs/x.md": {Key: statKey{Size: 1 << 40}, Sum: sha256.Sum256(nil)},
	}}
	f.Add(EncodeCache(c))
	f.Add(EncodeCache(&Cache{}))
	f.Add([]byte(cacheMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCache(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes to the same.
		again, err := DecodeCache(EncodeCache(c))
		if err != nil {
			t.Fatalf("re-encoded cache does not decode: %v", err)
		}
		if !bytes.Equal(EncodeCache(again), EncodeCache(c)) {
			t.Fatal("encode/decode is not stable")
		}
	})
}

// TestCacheRoundTrip: any cache survives encoding, and any single-byte
// corruption of its encoding is detected.
func TestCacheRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 20).Draw(t, "n")
		c := &Cache{m: map[string]cacheEntry{}}
		for i := range n {
			p := rapid.StringMatching(`[a-z]{1,8}(/[a-z.]{1,8}){0,3}`).Draw(t, "path")
			var e cacheEntry
			e.Key.Size = rapid.Int64Min(0).Draw(t, "size")
			e.Key.Mtime = rapid.Int64().Draw(t, "mtime")
			e.Key.Ctime = rapid.Int64().Draw(t, "ctime")
			e.Key.Ino = rapid.Uint64().Draw(t, "ino")
			e.Key.Dev = rapid.Uint64().Draw(t, "dev")
			e.Sum = sha256.Sum256([]byte{byte(i)})
			c.m[p] = e
		}
		b := EncodeCache(c)
		got, err := DecodeCache(b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if len(got.m) != len(c.m) {
			t.Fatalf("%d entries, want %d", len(got.m), len(c.m))
		}
		for p, e := range c.m {
			if got.m[p] != e {
				t.Fatalf("entry %q: %+v, want %+v", p, got.m[p], e)
			}
		}
		i := rapid.IntRange(0, len(b)-1).Draw(t, "byte")
		bad := bytes.Clone(b)
		bad[i] ^= byte(rapid.IntRange(1, 255).Draw(t, "flip"))
		if _, err := DecodeCache(bad); err == nil {
			t.Fatalf("corrupt byte %d not detected", i)
		}
		if _, err := DecodeCache(b[:rapid.IntRange(0, len(b)-1).Draw(t, "cut")]); err == nil {
			t.Fatal("truncation not detected")
		}
	})
}
