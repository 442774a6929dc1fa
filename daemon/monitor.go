package daemon

import (
	"context"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/monitor"
	"github.com/custodian-dev/custodian/reason"
)

// startMonitor runs the heartbeat monitor every Config.MonitorEvery until
// ctx is done; the returned channel is closed when it has stopped.
func (d *Daemon) startMonitor(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if d.cfg.MonitorEvery <= 0 {
			return
		}
		_ = monitor.Loop(ctx, d.cfg.MonitorEvery, nil, func(ctx context.Context) error {
			d.monitorPass(ctx)
			return nil
		})
	}()
	return done
}

// monitorPass runs one pass of the monitor through the daemon's
// application layer, and logs and counts what it did.
func (d *Daemon) monitorPass(ctx context.Context) {
	start := time.Now()
	cfg, err := d.cfg.ASDDConfig()
	var res *app.MonitorResult
	if err == nil {
		res, err = app.MonitorOnce(ctx, d.local, cfg, d.cfg.Now())
	}
	switch {
	case reason.CodeOf(err) == reason.NotFound:
		// No manifest yet: nothing to watch over.
	case err != nil && ctx.Err() != nil:
		// Stopping.
	case err != nil:
		d.metrics.ObserveCommit(start, false, err)
		d.cfg.Logger.Warn("heartbeat monitor", "error", err)
	case len(res.Actions) > 0:
		d.metrics.ObserveCommit(start, true, nil)
		d.cfg.Logger.Info("heartbeat monitor acted", "revision", res.Revision, "actions", len(res.Actions))
	}
}
