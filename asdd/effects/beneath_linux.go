//go:build linux

package effects

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2(2) turned out to be missing (a kernel
// older than 5.6, a seccomp filter): every path is then resolved by
// locate.
var noOpenat2 atomic.Bool

// openBeneath opens name (a clean project-relative path) for reading in
// one openat2(2) confined to the project with no symlink anywhere on the
// path (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): such a path resolves to
// itself, so what locate would check of it is the name's to check. ok is
// false when openat2 cannot open it so (a symlink on the way, a missing
// file, an old kernel…): the caller then resolves the path component by
// component (locate), which follows symlinks inside the project and names
// any problem.
func (p *Project) openBeneath(name string) (f *os.File, ok bool) {
	if noOpenat2.Load() {
		return nil, false
	}
	d, err := p.rootFile()
	if err != nil {
		return nil, false
	}
	conn, err := d.SyscallConn()
	if err != nil {
		return nil, false
	}
	fd := -1
	cerr := conn.Control(func(dfd uintptr) {
		fd, err = unix.Openat2(int(dfd), name, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | openFlags,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
	})
	if cerr != nil {
		return nil, false
	}
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		noOpenat2.Store(true)
	}
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), name), true
}
