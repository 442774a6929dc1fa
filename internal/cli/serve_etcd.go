package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/file"
)

// servedStore is what `custodian serve` serves and closes on shutdown: the
// file store in Hold mode, or an etcd store.
type servedStore interface {
	store.Store
	Close() error
}

// lockDaemonDir takes, for a daemon on etcd, the lock the file store's Hold
// mode takes: an exclusive flock on .asdd/state/custodian.pid holding the
// daemon's pid. It keeps a second daemon off this directory's socket; other
// daemons on the same etcd prefix run from other directories or machines.
// The returned function empties the pid file and releases the lock.
func lockDaemonDir(root string) (func(), error) {
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
		holder := "unknown"
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			holder = strings.TrimSpace(string(b))
		}
		return nil, reason.New(reason.Conflict, "another custodian daemon (pid %s) already serves this project directory (it holds %s)", holder, rel)
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

// startMirrors keeps this machine's mirrors of the etcd documents current
// from the etcd watch, for `custodian serve` on etcd: every document is
// written at start (a daemon restarted after a crash rebuilds them all),
// then each commit, whichever daemon or command made it; a mirror edited
// or deleted by hand is restored at once. The returned function stops it
// and waits.
func startMirrors(root string, s *etcd.Store, log *slog.Logger, now func() time.Time) (func(), error) {
	m, err := mirror.Open(root, mirror.Options{Source: s.Source(), Logger: log, Now: now})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := m.Run(ctx, s); err != nil {
			log.Error("mirrors stopped", "error", err)
		}
	}()
	log.Info("keeping the local mirrors of the etcd documents current", "root", root)
	return func() {
		cancel()
		<-done
		_ = m.Close()
	}, nil
}
