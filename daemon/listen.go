package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/custodian-dev/custodian/internal/unixsock"
	"github.com/custodian-dev/custodian/store/file"
)

// listen opens the unix socket and the TCP listener Config names.
func (d *Daemon) listen() error {
	if d.cfg.Socket != "" {
		if err := d.listenUnix(); err != nil {
			return err
		}
	}
	if d.cfg.Addr != "" {
		l, err := net.Listen("tcp", d.cfg.Addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", d.cfg.Addr, err)
		}
		d.ls = append(d.ls, l)
	}
	return nil
}

// listenUnix listens on the socket, readable by the owner only. The daemon
// holds its lock: a socket file left at the path is stale.
func (d *Daemon) listenUnix() error {
	p := d.cfg.Socket
	if !filepath.IsAbs(p) {
		p = filepath.Join(d.cfg.Root, filepath.FromSlash(p))
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	l, err := unixsock.Listen(p)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", p, err)
	}
	d.sock, d.ls = p, append(d.ls, l)
	if err := os.Chmod(p, 0o600); err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	return nil
}

// Socket returns the unix socket's absolute path ("" for none).
func (d *Daemon) Socket() string { return d.sock }

// Addr returns the TCP address the daemon listens on (its port chosen
// when Config.Addr asked for port 0), or "" for none.
func (d *Daemon) Addr() string {
	for _, l := range d.ls {
		if l.Addr().Network() == "tcp" {
			return l.Addr().String()
		}
	}
	return ""
}

// Addrs returns where the daemon listens: "unix:PATH" for the socket,
// "http://HOST:PORT" for TCP (as the pid file records them).
func (d *Daemon) Addrs() []string {
	var out []string
	if d.sock != "" {
		out = append(out, "unix:"+d.sock)
	}
	if a := d.Addr(); a != "" {
		out = append(out, "http://"+a)
	}
	return out
}

// announce records, for the file store, where the daemon listens in its
// pid file: commands that find the lock held name this daemon and where it
// listens, instead of waiting for it.
func (d *Daemon) announce() {
	fst, ok := d.st.(*file.Store)
	if !ok {
		return
	}
	if err := fst.AnnounceDaemon(d.Addrs()...); err != nil {
		d.cfg.Logger.Warn("daemon addresses not recorded in the pid file", "error", err)
	}
}
