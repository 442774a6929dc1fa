package file

import (
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// A direct-mode commit on a value opened by its checkpoint patches the
// value's lazy tree (jsonval.DecodeLazy: the canonical form of what the
// patch does not touch, written from the snapshot's bytes as they are
// checked; commitPatchDirect). That decoding needs only the bytes, not the
// change: on a large document it starts when Update calls its function
// and runs meanwhile on another goroutine (the application layer decodes
// its own copy of the value then), and the commit takes its result.

// earlyMin is the size from which a value's lazy tree is decoded while
// the update's function runs: below it, the decoding costs less than
// the goroutine.
const earlyMin = 64 << 10

// earlyTree is the lazy tree of src, decoded on another goroutine: tree
// and err are set once done is closed.
type earlyTree struct {
	src  []byte
	done chan struct{}
	tree any
	err  error
}

// decodeEarly starts decoding the current value's lazy tree (under mu,
// outside Hold mode) when a commit by its patch would need it: a large
// value known by its sum (the checkpoint's open) and not decoded yet.
// It is done once per value, whatever becomes of the update.
func (d *doc) decodeEarly() {
	if d.held.locked || d.tree != nil || d.sum == "" || d.adopted || d.value == nil || len(d.value) < earlyMin {
		return
	}
	if e := d.early; e != nil && sameBytes(e.src, d.value) {
		return
	}
	e := &earlyTree{src: d.value, done: make(chan struct{})}
	go func() {
		// The bytes are never written: a commit replaces the value.
		e.tree, e.err = jsonval.DecodeLazy(e.src)
		close(e.done)
	}()
	d.early = e
}

// lazyTree returns the current value's lazy tree: the one decodeEarly
// made of these bytes (taken: a commit may decode parts of it), or one
// decoded now.
func (d *doc) lazyTree() (any, error) {
	b := d.bytes()
	if e := d.early; e != nil {
		d.early = nil
		if sameBytes(e.src, b) {
			<-e.done
			return e.tree, e.err
		}
	}
	return jsonval.DecodeLazy(b)
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// fileHash is the SHA-256 of the snapshot a direct commit is about to
// write (the checkpoint's file), computed on another goroutine while the
// journal line is appended and synced.
type fileHash struct {
	src  []byte
	done chan struct{}
	sum  string
}

// hashSnapshot starts hashing snap, the bytes of a large snapshot about to
// be written (under mu, outside Hold mode).
func (d *doc) hashSnapshot(snap []byte) {
	d.snapSum = nil
	if d.held.locked || len(snap) < earlyMin {
		return
	}
	h := &fileHash{src: snap, done: make(chan struct{})}
	go func() {
		h.sum = store.HashBytes(h.src)
		close(h.done)
	}()
	d.snapSum = h
}

// snapshotHash returns store.HashBytes(snap): hashSnapshot's result when
// it hashed these bytes.
func (d *doc) snapshotHash(snap []byte) string {
	if h := d.snapSum; h != nil {
		d.snapSum = nil
		if sameBytes(h.src, snap) {
			<-h.done
			return h.sum
		}
	}
	return store.HashBytes(snap)
}
