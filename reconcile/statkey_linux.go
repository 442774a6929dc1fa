package reconcile

import (
	"io/fs"
	"syscall"
)

func sysKey(fi fs.FileInfo, k *statKey) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	k.Ino = st.Ino
	k.Dev = uint64(st.Dev) //nolint:unconvert // Dev's type differs across architectures.
	k.Ctime = st.Ctim.Nano()
}
