package reconcile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"sync"
)

// DefaultCachePath is where Check keeps its stat cache, relative to the
// project root.
const DefaultCachePath = ".asdd/state/statcache"

const cacheMagic = "CSTC1\n"

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
// The checksum guards against torn and damaged files, not against tampering:
// whoever can rewrite the cache can rewrite the artifacts too, and Full
// bypasses the cache.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// maxCacheEntries bounds what DecodeCache accepts, so that a corrupt count
// cannot make it allocate without limit.
const maxCacheEntries = 1 << 24

// cacheEntry is one remembered hash.
type cacheEntry struct {
	Key statKey
	Sum [32]byte
}

// Cache maps clean relative paths to the hash last computed for them and the
// stat they had then. The zero value is an empty cache.
type Cache struct {
	m map[string]cacheEntry
}

// Len returns the number of entries.
func (c *Cache) Len() int { return len(c.m) }

func (c *Cache) lookup(p string, k statKey) ([32]byte, bool) {
	if c == nil || c.m == nil {
		return [32]byte{}, false
	}
	e, ok := c.m[p]
	if !ok || e.Key != k {
		return [32]byte{}, false
	}
	return e.Sum, true
}

// EncodeCache renders c in the stat cache format (see the package doc),
// entries in a deterministic order.
func EncodeCache(c *Cache) []byte {
	var buf bytes.Buffer
	buf.WriteString(cacheMagic)
	paths := make([]string, 0, c.Len())
	if c != nil {
		for p := range c.m {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(x uint64) { buf.Write(tmp[:binary.PutUvarint(tmp[:], x)]) }
	sv := func(x int64) { buf.Write(tmp[:binary.PutVarint(tmp[:], x)]) }
	uv(uint64(len(paths)))
	for _, p := range paths {
		e := c.m[p]
		uv(uint64(len(p)))
		buf.WriteString(p)
		uv(uint64(e.Key.Size))
		sv(e.Key.Mtime)
		sv(e.Key.Ctime)
		uv(e.Key.Ino)
		uv(e.Key.Dev)
		buf.Write(e.Sum[:])
	}
	return binary.LittleEndian.AppendUint32(buf.Bytes(), crc32.Checksum(buf.Bytes(), castagnoli()))
}

// errCache is wrapped by every DecodeCache failure.
var errCache = errors.New("stat cache")

// DecodeCache parses the stat cache format. It checks the trailing checksum
// first, then every length against what is left.
func DecodeCache(b []byte) (*Cache, error) {
	if len(b) < len(cacheMagic)+4 || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, fmt.Errorf("%w: bad header", errCache)
	}
	body, trailer := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(trailer) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCache)
	}
	d := decoder{b: body[len(cacheMagic):]}
	n := d.uvarint()
	if d.err == nil && n > maxCacheEntries {
		return nil, fmt.Errorf("%w: %d entries, over the limit", errCache, n)
	}
	c := &Cache{m: make(map[string]cacheEntry, min(n, uint64(len(d.b))/34))}
	for i := uint64(0); i < n && d.err == nil; i++ {
		p := string(d.bytes(d.uvarint()))
		var e cacheEntry
		size := d.uvarint()
		e.Key.Mtime = d.varint()
		e.Key.Ctime = d.varint()
		e.Key.Ino = d.uvarint()
		e.Key.Dev = d.uvarint()
		copy(e.Sum[:], d.bytes(sha256.Size))
		if d.err != nil {
			break
		}
		if size > math.MaxInt64 {
			return nil, fmt.Errorf("%w: entry %d: size out of range", errCache, i)
		}
		e.Key.Size = int64(size)
		c.m[p] = e // a path the check never asks for is harmless; the last of duplicates wins
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCache, len(d.b))
	}
	return c, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or malformed %s", errCache, what)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("field")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

// LoadCache reads the stat cache at name (relative to root). A missing or
// undecodable cache yields an empty one: the cache only ever saves work.
func LoadCache(root *os.Root, name string) *Cache {
	b, err := root.ReadFile(name)
	if err != nil {
		return &Cache{}
	}
	c, err := DecodeCache(b)
	if err != nil {
		return &Cache{}
	}
	return c
}

// SaveCache writes c to name (relative to root) atomically: a temporary file
// in the same directory, then a rename. The cache is advisory, so it is not
// fsynced: after a crash it is either the old file, the new one, or fails its
// checksum and is ignored.
func SaveCache(root *os.Root, name string, c *Cache) error {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("save stat cache: %w", err)
	}
	tmp := name + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
	if err := root.WriteFile(tmp, EncodeCache(c), 0o644); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("save stat cache: %w", err)
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("save stat cache: %w", err)
	}
	return nil
}

// RemoveCache deletes the stat cache, if any.
func RemoveCache(root *os.Root, name string) error {
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stat cache: %w", err)
	}
	return nil
}
