//go:build unix

package progress

import (
	"os"
	"syscall"
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
