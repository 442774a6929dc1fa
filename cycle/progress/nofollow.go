package progress

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/custodian-dev/custodian/internal/filelock"
	"github.com/custodian-dev/custodian/reason"
)

// The progress directory is inside the project, where an agent may have
// planted a symlink (logs -> ../../../.asdd/state) or a hard link to one of
// the custodian's own files. os.Root refuses a symlink that leaves the root
// but follows one that stays inside it, so every file here is reached
// through no symlink at all: each directory on the way is checked with
// Lstat before it is opened, and the file is checked before and after it is
// opened.

// openDir opens dir (slash-separated, relative to root) through no
// symlink: each component must be a real directory (made when missing),
// and the directory opened must be the one examined, so a component
// swapped for a symlink in between is refused too.
func openDir(root *os.Root, dir string) (*os.Root, error) {
	cur, err := root.OpenRoot(".")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	walked := ""
	for _, part := range strings.Split(dir, "/") {
		if part == "" || part == "." {
			continue
		}
		walked += part + "/"
		fi, err := cur.Lstat(part)
		if errors.Is(err, fs.ErrNotExist) {
			if err = cur.Mkdir(part, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = cur.Lstat(part)
			}
		}
		if err != nil {
			cur.Close()
			return nil, fmt.Errorf("open %s: %w", walked, err)
		}
		if !fi.IsDir() { // a symlink's Lstat is not a directory
			cur.Close()
			return nil, notReal(strings.TrimSuffix(walked, "/"), fi, "a directory")
		}
		next, err := cur.OpenRoot(part)
		cur.Close()
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", walked, err)
		}
		if st, err := next.Stat("."); err != nil || !os.SameFile(fi, st) {
			next.Close()
			return nil, reason.New(reason.Conflict, "%s changed while it was being opened", strings.TrimSuffix(walked, "/"))
		}
		cur = next
	}
	return cur, nil
}

// openAppend opens the regular file name in dir for appending (made when
// missing), refusing a symlink, a file of another kind, or one with other
// hard links (it could be one of the custodian's own files). created says
// the file was made by this call.
func openAppend(dir *os.Root, name, rel string) (f *os.File, created bool, err error) {
	before, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return nil, false, fmt.Errorf("open %s: %w", rel, err)
	default:
		if err := ownFile(rel, before); err != nil {
			return nil, false, err
		}
	}
	f, err = dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND|openFlags, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", rel, err)
	}
	// What was opened must be what is at the name, with no symlink: a
	// symlink swapped in after the Lstat is refused here, before a write.
	opened, err := f.Stat()
	if err == nil {
		var at os.FileInfo
		if at, err = dir.Lstat(name); err == nil {
			if err = ownFile(rel, at); err == nil && !os.SameFile(opened, at) {
				err = reason.New(reason.Conflict, "%s changed while it was being opened", rel)
			}
		}
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return f, created, nil
}

// ownFile refuses what a log must not be written through: a symlink,
// anything but a regular file, a file with other hard links.
func ownFile(rel string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return notReal(rel, fi, "a regular file")
	}
	if n := links(fi); n > 1 {
		return reason.New(reason.InvalidInput, "%s has %d hard links; a cycle log is written only as a file of its own", rel, n).With("path", rel)
	}
	return nil
}

func notReal(rel string, fi os.FileInfo, want string) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return reason.New(reason.InvalidInput, "%s is a symlink; cycle files are written only through real directories, never through a symlink", rel).With("path", rel)
	}
	return reason.New(reason.InvalidInput, "%s is not %s", rel, want).With("path", rel)
}

// lock takes the exclusive file lock on the lock file p inside root (made
// when missing) and returns its release.
func lock(root *os.Root, p string) (func(), error) {
	unlock, err := filelock.Lock(root, p)
	if err != nil {
		return nil, fmt.Errorf("progress lock %s: %w", p, err)
	}
	return unlock, nil
}
