// Package filelock is the custodian's one file lock: gofrs/flock (flock(2)
// on unix, LockFileEx on Windows), taken on a file reached through an
// *os.Root, the lock the seed's scripts and plugins take with flock(1).
//
// gofrs/flock opens its file by path, which os.Root cannot confine, so the
// file is first opened through the root (made when missing, a regular file
// or a directory) and the lock is kept only when the file gofrs/flock
// opened is that same file: a symlink swapped in on the way never gets a
// lock taken outside the project.
package filelock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gofrs/flock"
)

// Lock takes an exclusive lock on name (a slash path inside root; "." is
// the root's own directory), creating it as an empty regular file when
// missing, waits until it is held, and returns its release.
func Lock(root *os.Root, name string) (unlock func(), err error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = root.OpenFile(name, os.O_RDWR|os.O_CREATE|openFlags, 0o644)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() && !dirLocks {
		return func() {}, nil
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	l := newFlock(root, name)
	for {
		if err = l.Lock(); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err == nil {
		err = same(l, fi, name)
	}
	if err != nil {
		_ = l.Unlock()
		return nil, err
	}
	return func() { _ = l.Unlock() }, nil
}

// Held says whether another open file holds a lock on the regular file
// name inside root (a daemon's pid file), without waiting: it tries a
// shared lock and lets it go at once.
func Held(root *os.Root, name string) (bool, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", name)
	}
	l := newFlock(root, name)
	free, err := l.TryRLock()
	if err != nil || !free {
		return !free, err
	}
	defer l.Unlock()
	return false, same(l, fi, name)
}

func newFlock(root *os.Root, name string) *flock.Flock {
	return flock.New(filepath.Join(root.Name(), filepath.FromSlash(name)), flock.SetFlag(os.O_RDONLY|openFlags))
}

// same refuses a lock taken on another file than the one opened through
// the root.
func same(l *flock.Flock, want fs.FileInfo, name string) error {
	got, err := l.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(got, want) {
		return fmt.Errorf("%s changed while it was being locked", name)
	}
	return nil
}
