//go:build !unix

package progress

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

const openFlags = 0

// links is the file's hard link count, where the platform says it.
func links(os.FileInfo) uint64 { return 1 }

// lock takes the platform's file lock on p (created through root first, so
// that it lies inside the project) and returns its release.
func lock(root *os.Root, p string) (func(), error) {
	f, err := root.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("progress lock: %w", err)
	}
	f.Close()
	l := flock.New(filepath.Join(root.Name(), filepath.FromSlash(p)))
	if err := l.Lock(); err != nil {
		return nil, fmt.Errorf("progress lock %s: %w", p, err)
	}
	return func() { _ = l.Unlock() }, nil
}
