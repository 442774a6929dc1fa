//go:build unix

package filelock

import "syscall"

// openFlags keeps the open of a FIFO swapped in for the file from blocking.
const openFlags = syscall.O_NONBLOCK

// dirLocks: flock(2) locks a directory as it locks a file.
const dirLocks = true
