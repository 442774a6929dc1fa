package daemon

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
)

// configRecheck is how long the daemon trusts its last look at the ASDD
// configuration file.
const configRecheck = time.Millisecond

// fileVersion tells two versions of a file apart without reading it.
type fileVersion struct {
	exists      bool
	size, mtime int64
	dev, ino    uint64
}

func versionOf(path string) fileVersion {
	fi, err := os.Stat(path)
	if err != nil {
		return fileVersion{}
	}
	v := fileVersion{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v.dev, v.ino = uint64(st.Dev), st.Ino
	}
	return v
}

// cachedConfig returns the ASDD configuration of the project at root
// (app.ReadConfig), read again only when .asdd/config.yaml changed (by its size, time and
// inode), so the daemon follows edits without parsing YAML on every
// proposal. The file is looked at (a stat) at most once per configRecheck:
// proposals that arrive together share one look, and an edit is seen by
// every operation that starts configRecheck or more after it (a CLI
// process takes longer than that to start).
func cachedConfig(root string) func() (*asdd.Config, error) {
	// The last look, read without a lock by every operation; a stale one
	// is renewed under mu by one of them while the others go on with it
	// (they started within configRecheck of it).
	type look struct {
		key     fileVersion
		cfg     *asdd.Config
		checked time.Time
	}
	var (
		mu   sync.Mutex
		last atomic.Pointer[look]
	)
	path := filepath.Join(root, filepath.FromSlash(asdd.ConfigPath))
	return func() (*asdd.Config, error) {
		if l := last.Load(); l != nil && time.Since(l.checked) < configRecheck {
			return l.cfg, nil
		}
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		l := last.Load()
		if l != nil && now.Sub(l.checked) < configRecheck {
			return l.cfg, nil
		}
		k := versionOf(path)
		if l != nil && k == l.key {
			last.Store(&look{key: k, cfg: l.cfg, checked: now})
			return l.cfg, nil
		}
		cfg, err := app.ReadConfig(root)
		if err != nil {
			return nil, err
		}
		last.Store(&look{key: k, cfg: cfg, checked: now})
		return cfg, nil
	}
}
