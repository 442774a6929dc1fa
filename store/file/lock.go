package file

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// locked runs f holding the in-process mutex and the cross-process lock.
// lockedRead is locked for operations that only read: a document with no
// file at all is NOT_FOUND at once, without creating its directory or lock
// file (a read must leave the project as it was).
// holding reports whether this store holds the document's lock (Hold mode).
// A document loaded in Hold mode (held.active: its lock is held until
// Close) is answered without taking d.mu: in the daemon every commit asked
// first, and waited behind the commit holding d.mu only to read a flag.
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

func (d *doc) lockedRead(ctx context.Context, f func() error) error {
	// A document held in Hold mode exists; locked says so if Close came
	// meanwhile.
	known := d.held.isActive()
	if !known {
		d.mu.Lock()
		known = d.loaded || d.held.isLocked()
		d.mu.Unlock()
	}
	if !known {
		exists := false
		for _, name := range []string{d.p.snap, d.p.tmp, d.p.journal} {
			id, err := d.stat(name)
			if err != nil {
				if reason.CodeOf(err) == reason.InvalidInput {
					return err
				}
				exists = true // let the locked path report it
				break
			}
			if id.exists {
				exists = true
				break
			}
		}
		if !exists {
			// A journal sealed whole, with no snapshot left beside it.
			segs, err := d.segments()
			if err != nil {
				return err
			}
			exists = len(segs) > 0
		}
		if !exists {
			// Gone, but committed here once: the locked path reports it.
			w, err := d.readWitness()
			if err != nil {
				return err
			}
			exists = w != nil
		}
		if !exists {
			return notFound(d.p.key)
		}
	}
	return d.locked(ctx, f)
}

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
	// Create the lock file through the root so a symlinked directory that
	// escapes the project is refused before flock follows the path.
	// Opened without blocking and checked: flock would hang on a FIFO.
	lf, err := d.openRegular(d.p.lock, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		if _, ok := reason.As(err); ok {
			return err
		}
		return pathError(d.p.key, err)
	}
	lf.Close()
	ok, err := d.flock.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", d.p.lock, err)
	}
	if !ok && d.s.daemon == nil {
		// Held by a daemon for its lifetime (one started without a socket
		// this process could reach): waiting would never end.
		if err := d.s.daemonHolder(d.p.lock); err != nil {
			return err
		}
	}
	if ok {
		// Taken at once.
	} else if ctx.Done() == nil {
		if err := d.flock.Lock(); err != nil {
			return fmt.Errorf("lock %s: %w", d.p.lock, err)
		}
	} else {
		ok, err := d.flock.TryLockContext(ctx, time.Millisecond)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("lock %s: %w", d.p.lock, err)
		}
		if !ok {
			return reason.New(reason.Conflict, "lock %s not acquired: %v", d.p.lock, ctx.Err())
		}
	}
	if d.s.daemon != nil {
		// Hold mode: keep the lock until Close.
		d.held.locked = true
		return f()
	}
	defer d.flock.Unlock()
	if d.coop != nil {
		unlock, err := d.coopLock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
	}
	return f()
}

// coopLock takes the cooperative lock of paths.coopLock (after the
// document's own lock, always in that order).
func (d *doc) coopLock(ctx context.Context) (func(), error) {
	lf, err := d.s.root.OpenFile(d.p.coopLock, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return nil, pathError(d.p.key, err)
	}
	lf.Close()
	if ctx == nil || ctx.Done() == nil {
		if err := d.coop.Lock(); err != nil {
			return nil, fmt.Errorf("lock %s: %w", d.p.coopLock, err)
		}
	} else {
		ok, err := d.coop.TryLockContext(ctx, time.Millisecond)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("lock %s: %w", d.p.coopLock, err)
		}
		if !ok {
			return nil, reason.New(reason.Conflict, "lock %s not acquired: %v", d.p.coopLock, ctx.Err())
		}
	}
	return func() { d.coop.Unlock() }, nil
}

// coopTry takes the cooperative lock if it is free, at once.
func (d *doc) coopTry() (bool, error) {
	lf, err := d.s.root.OpenFile(d.p.coopLock, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return false, pathError(d.p.key, err)
	}
	lf.Close()
	ok, err := d.coop.TryLock()
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", d.p.coopLock, err)
	}
	return ok, nil
}
