package file

import (
	"os"
	"syscall"
)

// changeTime is a file's status-change time in nanoseconds (0: unknown):
// it moves with any write or metadata change, and user space cannot set
// it back.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
