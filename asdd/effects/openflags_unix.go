//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package effects

import "syscall"

// openFlags keeps a FIFO swapped in after the check from blocking the
// open.
const openFlags = syscall.O_NONBLOCK
