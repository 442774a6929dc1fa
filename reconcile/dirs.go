package reconcile

import (
	"os"
	"path"
	"sync"
)

// dirs opens directories beneath the project root for a check. Each
// directory that is the parent of an artifact directory is opened once and
// kept for the whole check, so that opening an artifact directory costs one
// openat instead of one per path component. Every directory is reached
// through the root, so none can lie outside it.
type dirs struct {
	root *os.Root
	mu   sync.Mutex
	m    map[string]*dirEntry
}

type dirEntry struct {
	once sync.Once
	r    *os.Root
	err  error
}

func newDirs(root *os.Root) *dirs { return &dirs{root: root, m: map[string]*dirEntry{}} }

// open returns the directory dir; the caller closes it when owned is true.
func (d *dirs) open(dir string) (r *os.Root, owned bool, err error) {
	if dir == "." {
		return d.root, false, nil
	}
	if parent, err := d.kept(path.Dir(dir)); err == nil {
		if r, err := parent.OpenRoot(path.Base(dir)); err == nil {
			return r, true, nil
		}
	}
	// A symlink that leaves its parent but not the project, or an error:
	// resolve from the top, which also classifies the error.
	r, err = d.root.OpenRoot(dir)
	return r, err == nil, err
}

// kept opens dir once and keeps it until close.
func (d *dirs) kept(dir string) (*os.Root, error) {
	if dir == "." {
		return d.root, nil
	}
	d.mu.Lock()
	e := d.m[dir]
	if e == nil {
		e = &dirEntry{}
		d.m[dir] = e
	}
	d.mu.Unlock()
	e.once.Do(func() {
		if parent, err := d.kept(path.Dir(dir)); err == nil {
			if e.r, e.err = parent.OpenRoot(path.Base(dir)); e.err == nil {
				return
			}
		}
		e.r, e.err = d.root.OpenRoot(dir)
	})
	return e.r, e.err
}

func (d *dirs) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.m {
		if e.r != nil {
			e.r.Close()
		}
	}
	d.m = nil
}
