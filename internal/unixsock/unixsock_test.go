package unixsock_test

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/unixsock"
)

// deepDir returns a directory whose path is at least n bytes long.
func deepDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for len(dir) < n {
		dir = filepath.Join(dir, strings.Repeat("d", 40))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestListenAndDial(t *testing.T) {
	for _, tc := range []struct {
		name string
		min  int
	}{
		{"short path", 0},
		{"path over the kernel's limit", 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.min > 0 && runtime.GOOS != "linux" {
				t.Skip("long socket paths are reached through /proc on Linux only")
			}
			path := filepath.Join(deepDir(t, tc.min), "custodian.sock")
			l, err := unixsock.Listen(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Addr().String(); got != path && tc.min > 0 {
				t.Errorf("Addr() = %s, want %s", got, path)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode()&fs.ModeSocket == 0 {
				t.Fatalf("no socket at the path: %v", err)
			}
			go func() {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("echo " + line))
			}()
			var d net.Dialer
			c, err := unixsock.Dial(context.Background(), &d, path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte("hello\n"))
			got, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || got != "echo hello\n" {
				t.Fatalf("round trip: %q, %v", got, err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("socket file still there after Close: %v", err)
			}
		})
	}
}

// A long path with nothing listening fails like a short one: connection
// refused once the file is there, not found before.
func TestDialLongPathNothingListening(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	path := filepath.Join(deepDir(t, 300), "custodian.sock")
	var d net.Dialer
	_, err := unixsock.Dial(context.Background(), &d, path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Dial of a missing socket: %v, want an error naming %s", err, path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Dial of a missing socket: %v, want ErrNotExist", err)
	}
}
