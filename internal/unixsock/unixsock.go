// Package unixsock listens on and dials Unix domain sockets at any path.
//
// The kernel takes a socket's path in a fixed-size field (108 bytes on
// Linux, 104 on the BSDs and macOS), so the default daemon socket of a
// project deep in the filesystem cannot be bound by its path. On Linux the
// socket is then reached through its directory: the directory is opened
// and the socket named as /proc/self/fd/N/NAME, which is short whatever
// the directory's depth. Elsewhere a path over the limit is an error that
// says so and names the way out.
package unixsock

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// Listen listens on the socket at path. When path is too long to bind
// directly, the listener's Close removes the socket file itself, as Go's
// does for a listener bound by its path.
func Listen(path string) (net.Listener, error) {
	if len(path) < maxPath {
		return net.Listen("unix", path)
	}
	var l net.Listener
	err := viaDir(path, func(short string) error {
		var err error
		l, err = net.Listen("unix", short)
		return err
	})
	if err != nil {
		return nil, err
	}
	ul := l.(*net.UnixListener)
	// The short name is only valid while its directory is open: the file
	// is removed by its real path.
	ul.SetUnlinkOnClose(false)
	return &listener{UnixListener: ul, path: path}, nil
}

// Dial connects to the socket at path.
func Dial(ctx context.Context, d *net.Dialer, path string) (net.Conn, error) {
	if len(path) < maxPath {
		return d.DialContext(ctx, "unix", path)
	}
	var c net.Conn
	err := viaDir(path, func(short string) error {
		var err error
		c, err = d.DialContext(ctx, "unix", short)
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

type listener struct {
	*net.UnixListener
	path string
}

func (l *listener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *listener) Close() error {
	err := l.UnixListener.Close()
	if rerr := os.Remove(l.path); err == nil && rerr != nil && !os.IsNotExist(rerr) {
		err = rerr
	}
	return err
}

// viaDir calls f with a short name of the socket at path, valid during
// the call, or says why there is none.
func viaDir(path string, f func(short string) error) error {
	if !procFD {
		return fmt.Errorf("unix socket %s: the path is %d bytes, over this system's limit of %d: use a shorter path", path, len(path), maxPath-1)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("unix socket %s: %w", path, err)
	}
	defer dir.Close()
	short := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)
	if len(short) >= maxPath {
		return fmt.Errorf("unix socket %s: the file name is too long for a socket (%d bytes)", path, len(filepath.Base(path)))
	}
	if err := f(short); err != nil {
		return fmt.Errorf("unix socket %s (as %s): %w", path, short, err)
	}
	return nil
}
