package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/store/etcd"
)

// startMirrors keeps this machine's mirrors of the etcd documents current
// from the etcd watch: every document is written at start (a daemon
// restarted after a crash rebuilds them all), then each commit, whichever
// daemon or command made it; a mirror edited or deleted by hand is
// restored at once. The returned function stops it and waits.
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
