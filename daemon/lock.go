package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
)

// LockDir takes, for a daemon on etcd, the lock the file store's Hold mode
// takes: an exclusive flock on .asdd/state/custodian.pid holding the
// daemon's pid. It keeps a second daemon off this directory's socket;
// other daemons on the same etcd prefix run from other directories or
// machines. The returned function empties the pid file and releases the
// lock.
func LockDir(root string) (func(), error) {
	rel := file.DefaultPidFile
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	fl := flock.New(p)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("daemon lock %s: %w", rel, err)
	}
	if !ok {
		return nil, reason.New(reason.Conflict, "another custodian daemon (pid %s) already serves this project directory (it holds %s)", lockHolder(p), rel)
	}
	if err := os.WriteFile(p, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644); err != nil {
		_ = fl.Unlock()
		return nil, fmt.Errorf("daemon lock: write pid: %w", err)
	}
	return func() {
		_ = os.Truncate(p, 0)
		_ = fl.Unlock()
	}, nil
}

// lockHolder is the pid a daemon lock file names, or "unknown".
func lockHolder(p string) string {
	if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "unknown"
}
