package file

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/reason"
)

// holding reports whether this store holds the document's lock (Hold
// mode); once loaded without d.mu, which every daemon commit would wait on.
func (d *doc) holding() bool {
	if d.held == nil {
		return false
	}
	if d.held.isActive() {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.held.locked
}

// lockedRead is locked for operations that only read: a document with no
// file at all is NOT_FOUND at once, without creating its directory or lock
// file (a read leaves the project as it was).
func (d *doc) lockedRead(ctx context.Context, f func() error) error {
	known := d.held.isActive()
	if !known {
		d.mu.Lock()
		known = d.loaded || d.held.isLocked()
		d.mu.Unlock()
	}
	if !known {
		if ok, err := d.anyFile(); err != nil {
			return err
		} else if !ok {
			return notFound(d.p.key)
		}
	}
	return d.locked(ctx, f)
}

// anyFile reports whether any file of the document exists (a broken one
// counts: the locked path reports it), or its witness says it did.
func (d *doc) anyFile() (bool, error) {
	for _, name := range []string{d.p.snap, d.p.tmp, d.p.journal} {
		id, err := d.stat(name)
		if err != nil && reason.CodeOf(err) == reason.InvalidInput {
			return false, err
		}
		if err != nil || id.exists {
			return true, nil
		}
	}
	if segs, err := d.segments(); err != nil || len(segs) > 0 {
		return err == nil, err // a journal sealed whole, with no snapshot left
	}
	w, err := d.readWitness() // gone, but committed here once
	return w != nil, err
}

// locked runs f holding the in-process mutex and the cross-process lock
// (in Hold mode taken once and kept until Close).
func (d *doc) locked(ctx context.Context, f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held.isLocked() {
		return f()
	}
	if d.held != nil && d.held.closed {
		return errClosed
	}
	if err := d.s.root.MkdirAll(d.p.dir, 0o755); err != nil {
		return pathError(d.p.key, err)
	}
	if err := d.lockFile(d.p.lock); err != nil {
		return err
	}
	ok, err := d.flock.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", d.p.lock, err)
	}
	if !ok {
		if d.s.daemon == nil {
			// Held by a daemon for its lifetime: waiting would never end.
			if err := d.s.daemonHolder(d.p.lock); err != nil {
				return err
			}
		}
		if err := waitLock(ctx, d.flock, d.p.lock); err != nil {
			return err
		}
	}
	if d.s.daemon != nil {
		d.held.locked = true
		return f()
	}
	defer d.flock.Unlock()
	if d.coop != nil {
		if err := d.coopLock(ctx); err != nil {
			return err
		}
		defer d.coop.Unlock()
	}
	return f()
}

// waitLock waits for fl (the lock file name) until ctx is done.
func waitLock(ctx context.Context, fl *flock.Flock, name string) error {
	if ctx == nil || ctx.Done() == nil {
		if err := fl.Lock(); err != nil {
			return fmt.Errorf("lock %s: %w", name, err)
		}
		return nil
	}
	ok, err := fl.TryLockContext(ctx, time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return reason.New(reason.Conflict, "lock %s not acquired: %v", name, ctx.Err())
	}
	return nil
}

// coopLock takes the cooperative lock of paths.coopLock (after the
// document's own lock, always in that order).
func (d *doc) coopLock(ctx context.Context) error {
	if err := d.lockFile(d.p.coopLock); err != nil {
		return err
	}
	return waitLock(ctx, d.coop, d.p.coopLock)
}

// lockFile makes a lock file through the root (a symlinked directory that
// escapes the project is refused before flock follows the path), checked
// to be a regular file (flock would hang on a FIFO).
func (d *doc) lockFile(name string) error {
	lf, _, err := d.openRegular(name, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return pathError(d.p.key, err)
	}
	return lf.Close()
}
