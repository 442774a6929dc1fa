//go:build unix

package progress

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags keeps the open of a FIFO swapped in for a log from blocking.
const openFlags = syscall.O_NONBLOCK

// links is the file's hard link count.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// lock takes flock(2) on the lock file p, opened through root, and returns
// its release.
func lock(root *os.Root, p string) (func(), error) {
	f, err := root.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("progress lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("progress lock %s: %w", p, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
