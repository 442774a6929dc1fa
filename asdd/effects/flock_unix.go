//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package effects

import (
	"os"
	"syscall"
)

// openFlags keeps a FIFO swapped in after the check from blocking the
// open.
const openFlags = syscall.O_NONBLOCK

// flock takes an exclusive flock(2) on the open directory d, released when
// d is closed.
func flock(d *os.File) error {
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
