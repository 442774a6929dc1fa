package daemon

import (
	"fmt"
	"os"

	"github.com/custodian-dev/custodian/internal/pidfile"
)

// LockDir takes, for a daemon on etcd, the lock the file store's Hold mode
// takes: the pid file (package pidfile). It keeps a second daemon off this
// directory's socket; other daemons on the same etcd prefix run from other
// directories or machines. The returned function empties the pid file and
// releases the lock.
func LockDir(root string) (func(), error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	l, err := pidfile.Take(r, pidfile.Default)
	if err != nil {
		r.Close()
		return nil, err
	}
	return func() {
		_ = l.Release()
		r.Close()
	}, nil
}
