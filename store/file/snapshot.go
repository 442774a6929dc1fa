package file

import (
	"context"
	"fmt"
	"os"

	"github.com/custodian-dev/custodian/store"
)

// snapshotView is what this process knows of a document's snapshot file.
type snapshotView struct {
	// wrote and mark are guarded by doc.mu, or in Hold mode by
	// hold.snapMu (the snapshot writer's).
	id    fileID // identity as last read or written
	wrote fileID // of the snapshot this process last wrote (its temp file's, before the rename)
	mark  string // the file hash of the snapshot on disk when a mark names it (writeMark keeps that mark)
	hash  string // in Hold mode, the SHA-256 of the snapshot file's bytes as load left it
}

// writeSnapshot replaces the snapshot durably with b (replaceFile), the
// value after rec (nil: unsaid). When rec carries no sum (a daemon's
// commit made through its patch), a mark binds the file to rec first, as
// the daemon's snapshot writer does, so the next open knows which revision
// the file holds instead of moving it aside.
func (d *doc) writeSnapshot(b []byte, rec *store.Record) error {
	if d.coop != nil && d.s.daemon != nil {
		// Hold mode keeps the document's lock for the daemon's lifetime;
		// the cooperative lock is taken around each snapshot rewrite
		// (the snapshot writer takes it itself: flushSnapshot).
		if err := d.coopLock(context.Background()); err != nil {
			return err
		}
		defer d.coop.Unlock()
	}
	var before func() error
	m := mark{}
	if rec != nil && rec.Sum == "" {
		m = mark{Rev: rec.Rev, Hash: rec.Hash, File: store.HashBytes(b)}
		before = func() error { return d.writeMark(m) }
	}
	if err := d.replaceFile(d.p.snap, d.p.tmp, "snapshot", writing(b), before); err != nil {
		return err
	}
	d.snap.mark = m.File
	return nil
}

// writing is replaceFile's write of b.
func writing(b []byte) func(f *os.File) error {
	return func(f *os.File) error {
		_, err := f.Write(b)
		return err
	}
}

// replaceFile replaces name with what write writes, atomically and
// durably: tmp is written and synced, beforeRename (when set) runs, tmp is
// renamed over name and the directory synced. A failure removes tmp and
// leaves name as it was. The fault points are point+".write", ".sync" and
// ".rename" (and "dir.sync").
func (d *doc) replaceFile(name, tmp, point string, write func(f *os.File) error, beforeRename func() error) error {
	err := d.fault(point + ".write")
	var f *os.File
	if err == nil {
		f, _, err = d.openRegular(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	err = write(f)
	if err == nil {
		if err = d.fault(point + ".sync"); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && beforeRename != nil {
		err = beforeRename()
	}
	var id fileID
	if err == nil && name == d.p.snap {
		// The identity the snapshot will have (rename keeps the inode and
		// the mtime): taken now, so that a write right after the rename
		// is never mistaken for ours.
		id, err = d.stat(tmp)
	}
	if err == nil {
		if err = d.fault(point + ".rename"); err == nil {
			err = d.s.root.Rename(tmp, name)
		}
	}
	if err == nil && name == d.p.snap {
		d.snap.wrote = id
	}
	if err != nil {
		_ = d.s.root.Remove(tmp)
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return d.syncDir()
}
