package file

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"os"

	"github.com/custodian-dev/custodian/store"
)

// A document's checkpoint (<dir>/.<name>.checkpoint; .checkpoint beside
// manifest.json) spares a direct-mode open what the last commit or full
// open already verified: reading and hashing every record of the live
// journal, and parsing the snapshot to compare its canonical sum with the
// last record's. One JSON line naming the live journal's last record
// (rev, hash; its line at byte off, len bytes with its newline), the live
// journal's first revision, the journal file as it was then (journal:
// device, inode, size, modification and, on Linux, status-change times),
// and the SHA-256 of the snapshot file written after that record (file)
// with the canonical sum of its value (sum, the record's). Written by a
// direct commit after the snapshot and by an open that read the whole
// journal (temp file and rename, not fsynced: a hint, written once what it
// names is durable).
//
// It is checked against the files, never trusted alone: the journal must
// be the very file it names, untouched since (any write by anyone means a
// full read); the line at off must be the checkpoint's record, its own
// hash checked; the anchor and the witness must agree with it; the
// snapshot's bytes must hash to file. Anything else takes the full load.
// With a journal key it carries an HMAC. Damage below the file system (a
// disk's bit rot) is found by custodian verify, which reads every record.
type checkpoint struct {
	Rev     uint64 `json:"rev"`
	Hash    string `json:"hash"`
	Off     int64  `json:"off"`
	Len     int64  `json:"len"`
	First   uint64 `json:"first"`
	Journal string `json:"journal"` // journalVersion
	File    string `json:"file"`
	Sum     string `json:"sum"`
	MAC     string `json:"mac,omitempty"`
}

// checkpointMAC authenticates a checkpoint's fields.
func checkpointMAC(key []byte, c checkpoint) string {
	msg := fmt.Sprintf("custodian-checkpoint\x00%d\x00%s\x00%d\x00%d\x00%d\x00%s\x00%s\x00%s", c.Rev, c.Hash, c.Off, c.Len, c.First, c.Journal, c.File, c.Sum)
	return store.MAC(key, []byte(msg))
}

// readCheckpoint returns the document's checkpoint, nil when there is none
// to go by (missing, unreadable, or not authenticated by the journal key).
func (d *doc) readCheckpoint() *checkpoint {
	b, err := d.readFile(d.p.checkpoint)
	if err != nil || b == nil {
		return nil
	}
	var c checkpoint
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || c.Rev == 0 || c.Hash == "" || c.Off < 0 || c.Len < 2 || c.First == 0 || c.First > c.Rev || c.Journal == "" || c.File == "" {
		return nil
	}
	if k := d.s.key; k != nil && !hmac.Equal([]byte(c.MAC), []byte(checkpointMAC(k, c))) {
		return nil
	}
	return &c
}

// writeCheckpoint records that rec, whose journal line starts at off and
// is n bytes long, is the live journal's head, and that snap (the
// snapshot as written after it) holds its value, whose canonical sum is
// sum. Best effort, outside Hold mode: a failure leaves the next open the
// full read.
func (d *doc) writeCheckpoint(rec *store.Record, off, n int64, snap []byte, sum string) {
	if d.s.opts.Hold || rec == nil || sum != rec.Sum || off < 0 || d.j.liveFirst == 0 || d.j.liveFirst > rec.Rev {
		return
	}
	fi, err := d.s.root.Lstat(d.p.journal)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != off+n {
		return
	}
	c := checkpoint{Rev: rec.Rev, Hash: rec.Hash, Off: off, Len: n, First: d.j.liveFirst, Journal: journalVersion(fi), File: store.HashBytes(snap), Sum: sum}
	if c.Journal == "" {
		return
	}
	if k := d.s.key; k != nil {
		c.MAC = checkpointMAC(k, c)
	}
	b, _ := json.Marshal(c) // strings and numbers: it cannot fail
	tmp := d.p.checkpoint + ".tmp"
	err = d.s.root.WriteFile(tmp, append(b, '\n'), 0o644)
	if err == nil {
		err = d.s.root.Rename(tmp, d.p.checkpoint)
	}
	if err != nil {
		_ = d.s.root.Remove(tmp)
		d.logf("checkpoint not written; the next open reads the whole journal", "error", err)
	}
}

// loadFast is load by the checkpoint (outside Hold mode): the journal
// file exactly as the checkpoint saw it, its last record the checkpoint's,
// the snapshot known by its hash. It returns false, having changed
// nothing, whenever the full load must run instead (see checkpoint).
func (d *doc) loadFast() bool {
	if d.s.opts.Hold || d.repair != nil {
		return false
	}
	c := d.readCheckpoint()
	if c == nil {
		return false
	}
	if id, err := d.stat(d.p.tmp); err != nil || id.exists {
		return false // recoverTmp's case
	}
	f, fi, err := d.openRegular(d.p.journal, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	jid := idOf(fi)
	if v := journalVersion(fi); v == "" || v != c.Journal || jid.size != c.Off+c.Len {
		return false // written since (another process, another tool): read it whole
	}
	line := make([]byte, c.Len)
	if n, _ := f.ReadAt(line, c.Off); int64(n) != c.Len {
		return false
	}
	if line[len(line)-1] != '\n' || bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return false
	}
	last, err := store.DecodeRecord(line[:len(line)-1])
	if err != nil || last.Rev != c.Rev || last.Hash != c.Hash || last.Sum != c.Sum {
		return false
	}
	// The anchor and the witness as an open checks them (a witness behind
	// is brought forward); an anchor behind the checkpoint, or any error,
	// is the full read's to settle.
	if a, err := d.checkAnchor([]store.Record{last}, true); err != nil || a != nil && a.Rev < c.Rev {
		return false
	}
	snap, snapID, err := d.readFileID(d.p.snap)
	if err != nil || snap == nil || store.HashBytes(snap) != c.File {
		return false
	}
	d.cur, d.sum, d.adopted = bytesValue(snap), last.Sum, false
	d.rev, d.last = last.Rev, &last
	d.j.liveFirst = c.First
	d.j.id, d.snap.id = jid, snapID
	d.snap.mark, d.snap.hash = "", ""
	d.readOnly = nil
	d.loaded = true
	return true
}

// journalVersion identifies a version of a file: device, inode, size,
// and the modification and status-change times in nanoseconds (the
// latter moves with any write, and user space cannot set it back).
func journalVersion(fi os.FileInfo) string {
	id := idOf(fi)
	if id.ino == 0 {
		return "" // no identity to go by: never fast
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d", id.dev, id.ino, id.size, id.mtime, changeTime(fi))
}
