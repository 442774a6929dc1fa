package daemon

import (
	"fmt"
	"os"
	"strings"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/internal/directedit"
	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/file"
)

// servedStore is what the daemon serves and closes on shutdown: the file
// store in Hold mode, or an etcd store.
type servedStore interface {
	store.Store
	Close() error
}

// IsEtcdURL reports whether a store URL names an etcd store.
func IsEtcdURL(u string) bool {
	return strings.HasPrefix(u, "etcd://") || strings.HasPrefix(u, "etcds://")
}

// openStore opens the store d serves and registers what releases it.
func (d *Daemon) openStore() error {
	if IsEtcdURL(d.cfg.Store) {
		return d.openEtcd()
	}
	if d.cfg.Store != "" {
		return reason.Usage("store %q: want an etcd://HOST:PORT/PREFIX URL, or none for the files under the project", d.cfg.Store)
	}
	return d.openFile()
}

// openFile holds the file store under the project root: the state lock
// for the daemon's lifetime, group commit, snapshots paced by
// SnapshotInterval, direct edits watched and settled at once.
func (d *Daemon) openFile() error {
	o := file.Options{Now: d.cfg.Now, Logger: d.cfg.Logger, Hold: true, SnapshotInterval: d.cfg.SnapshotInterval,
		OnSync: d.metrics.ObserveSync, SnapshotOnCommit: pluginReadDocument, SegmentBytes: d.cfg.SegmentBytes}
	o.Limits.MaxBytes = d.cfg.MaxDocumentBytes
	if err := directedit.Configure(&o, d.cfg.Root, d.cfg.Stdout); err != nil {
		return err
	}
	w, err := projectroot.WitnessDir(d.cfg.Root)
	if err != nil {
		return err
	}
	o.Witness = w
	st, err := file.Open(d.cfg.Root, o)
	if err != nil {
		return err
	}
	d.st = st
	return nil
}

// openEtcd opens the etcd store with this directory's daemon lock, and
// keeps the local mirrors of its documents current. Several daemons may
// serve one etcd prefix (on several machines): etcd orders their commits.
// Only this directory's socket and pid file are one daemon's.
func (d *Daemon) openEtcd() error {
	unlock, err := LockDir(d.cfg.Root)
	if err != nil {
		return err
	}
	d.unlock = unlock
	st, err := OpenEtcd(d.cfg.Store, etcd.Options{Now: d.cfg.Now, Limits: store.Limits{MaxBytes: d.cfg.MaxDocumentBytes}})
	if err != nil {
		return err
	}
	d.cfg.Logger.Info("custodian daemon on etcd", "store", RedactURL(d.cfg.Store))
	stop, err := startMirrors(d.cfg.Root, st, d.cfg.Logger, d.cfg.Now)
	if err != nil {
		st.Close()
		return err
	}
	d.st, d.stopMirrors = st, stop
	return nil
}

// OpenEtcd opens the etcd store a URL names with store options (the URL's
// prefix and request limit override opts'), taking credentials the URL
// does not give from $CUSTODIAN_ETCD_USER and $CUSTODIAN_ETCD_PASSWORD.
func OpenEtcd(raw string, opts etcd.Options) (*etcd.Store, error) {
	cfg, err := etcd.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	cfg.FromEnv(os.Getenv)
	s, err := etcd.Open(cfg, opts)
	if err != nil {
		if reason.CodeOf(err) != "" {
			return nil, err
		}
		return nil, fmt.Errorf("%w (is etcd running at %s?)", err, strings.Join(cfg.Endpoints, ", "))
	}
	return s, nil
}

// RedactURL drops a password from a store URL for printing.
func RedactURL(u string) string {
	if !IsEtcdURL(u) {
		return u
	}
	if cfg, err := etcd.ParseURL(u); err == nil {
		return cfg.String()
	}
	return u
}

// pluginReadDocument reports whether plugins read a document from disk
// right after changing it (principled's hooks run jq on .impl/manifest.json,
// the state managers read .agents/tmp/state.json, the dev cycle its files):
// the daemon acknowledges commits of those once the file holds them.
func pluginReadDocument(key string) bool {
	if key == impl.Key || key == agentstate.Key {
		return true
	}
	_, ok := cycle.IDFromKey(key)
	return ok
}
