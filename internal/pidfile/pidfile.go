// Package pidfile is the custodian daemon's pid file: an exclusive flock(2)
// held for the daemon's lifetime, so that one daemon serves a project
// directory, on a file holding its pid and then the addresses it listens
// on, a line each, so that a command that finds the project held can name
// the daemon to send itself to instead of waiting.
package pidfile

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/internal/filelock"
	"github.com/custodian-dev/custodian/reason"
)

// Default is the pid file, relative to the project root.
const Default = ".asdd/state/custodian.pid"

// A Lock is a pid file taken by this process.
type Lock struct {
	root *os.Root
	name string
	fl   *flock.Flock
}

// Take takes the pid file name (a slash path inside root, made with its
// directory when missing) without waiting and writes this process's pid
// there; held by another daemon, it is CONFLICT naming that daemon's pid.
func Take(root *os.Root, name string) (*Lock, error) {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	f, err := root.OpenFile(name, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	f.Close()
	fl := flock.New(filepath.Join(root.Name(), filepath.FromSlash(name)))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("daemon lock %s: %w", name, err)
	}
	if !ok {
		pid, _ := read(root, name)
		return nil, reason.New(reason.Conflict, "another custodian daemon (pid %s) already serves this project (it holds %s)", pid, name)
	}
	l := &Lock{root: root, name: name, fl: fl}
	if err := l.Announce(); err != nil {
		fl.Unlock()
		return nil, err
	}
	return l, nil
}

// Announce writes the pid and then addrs, where the daemon can be reached.
func (l *Lock) Announce(addrs ...string) error {
	b := fmt.Appendf(nil, "%d\n", os.Getpid())
	for _, a := range addrs {
		b = append(b, strings.ReplaceAll(a, "\n", " ")...)
		b = append(b, '\n')
	}
	if err := l.root.WriteFile(l.name, b, 0o644); err != nil {
		return fmt.Errorf("daemon lock: write pid: %w", err)
	}
	return nil
}

// Release empties the pid file and lets it go.
func (l *Lock) Release() error {
	_ = l.root.WriteFile(l.name, nil, 0o644)
	return l.fl.Unlock()
}

// Holder says whether a daemon holds the pid file name inside root, and
// the pid ("unknown" when it wrote none) and addresses it announced.
func Holder(root *os.Root, name string) (pid string, addrs []string, held bool) {
	if held, err := filelock.Held(root, name); err != nil || !held {
		return "", nil, false // no daemon: the file is free (or missing, or not a regular file)
	}
	pid, addrs = read(root, name)
	return pid, addrs, true
}

// read returns what the pid file holds: the pid ("unknown": none) and the
// addresses.
func read(root *os.Root, name string) (pid string, addrs []string) {
	var b []byte
	if f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		b, _ = io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
	}
	var lines []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "unknown", []string{}
	}
	return lines[0], lines[1:]
}
