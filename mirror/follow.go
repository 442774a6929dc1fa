package mirror

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Follower is a store that hands over its documents' versions as they are
// committed (store/etcd's Store, from the etcd watch of its documents).
type Follower interface {
	// FollowDocs calls fn with the latest version of every document, then
	// with the versions committed after, until ctx is done. Each call's
	// documents are distinct keys; a call may skip revisions of a key (it
	// gives the latest), never go back. It resumes by itself when the
	// cluster is away and returns nil when ctx is done.
	FollowDocs(ctx context.Context, fn func([]store.Document)) error
}

// SweepEvery is how often Run checks every mirror it keeps for edits that
// file system notifications missed (a directory removed and made again).
const SweepEvery = 5 * time.Second

// Run keeps the mirrors current from f until ctx is done: every version f
// hands over is written, and a mirror edited or deleted by hand is
// restored at once (file system notifications, and a sweep every
// SweepEvery). Failures are logged and retried with the next version; Run
// returns f's error, or nil when ctx is done.
func (m *Mirror) Run(ctx context.Context, f Follower) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := newWatcher(m)
	defer w.close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.loop(ctx)
	}()
	err := f.FollowDocs(ctx, func(docs []store.Document) {
		start := time.Now()
		defer func() {
			m.opts.Logger.Debug("mirror: batch written", "documents", len(docs), "took", time.Since(start))
		}()
		for _, d := range docs {
			m.RemoveStaleTempsOnce(d.Key)
		}
		_, errs := m.WriteBatch(docs)
		for i, d := range docs {
			if errs[i] != nil {
				m.opts.Logger.Warn("mirror: could not write", "document", d.Key, "revision", d.Revision, "error", errs[i])
			}
			w.watch(d.Key)
		}
	})
	cancel()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// RemoveStaleTempsOnce is RemoveStaleTemps the first time this Mirror sees
// key.
func (m *Mirror) RemoveStaleTempsOnce(key string) {
	m.mu.Lock()
	seen := m.cleaned[key]
	m.cleaned[key] = true
	m.mu.Unlock()
	if !seen {
		m.RemoveStaleTemps(key)
	}
}

// watcher restores mirrors edited behind the Mirror's back.
type watcher struct {
	m    *Mirror
	fw   *fsnotify.Watcher // nil when the platform gives none: sweeps only
	mu   sync.Mutex
	dirs map[string]bool   // watched directories (absolute)
	keys map[string]string // absolute mirror path -> key
	kick chan struct{}
}

func newWatcher(m *Mirror) *watcher {
	w := &watcher{m: m, dirs: map[string]bool{}, keys: map[string]string{}, kick: make(chan struct{}, 1)}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		m.opts.Logger.Warn("mirror: no file system notifications; direct edits are found by a sweep every "+SweepEvery.String(), "error", err)
	} else {
		w.fw = fw
	}
	return w
}

func (w *watcher) close() {
	if w.fw != nil {
		_ = w.fw.Close()
	}
}

// watch adds the directory of key's mirror to the watched ones.
func (w *watcher) watch(key string) {
	abs := filepath.Join(w.m.dir, filepath.FromSlash(key))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keys[abs] = key
	dir := filepath.Dir(abs)
	if w.fw == nil || w.dirs[dir] {
		return
	}
	if err := w.fw.Add(dir); err == nil {
		w.dirs[dir] = true
	}
}

// loop restores the mirrors whose files changed, a few milliseconds after
// the last change (an editor's write comes in several events), and sweeps
// every mirror every SweepEvery.
func (w *watcher) loop(ctx context.Context) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fw != nil {
		events, errs = w.fw.Events, w.fw.Errors
	}
	sweep := time.NewTicker(SweepEvery)
	defer sweep.Stop()
	pending := map[string]bool{}
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.mu.Lock()
			key, known := w.keys[ev.Name]
			w.mu.Unlock()
			if known {
				pending[key] = true
				settle = time.After(5 * time.Millisecond)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.m.opts.Logger.Warn("mirror: file system notifications", "error", err)
		case <-settle:
			settle = nil
			for key := range pending {
				w.restore(key)
			}
			clear(pending)
		case <-sweep.C:
			w.mu.Lock()
			keys := make([]string, 0, len(w.keys))
			for _, k := range w.keys {
				keys = append(keys, k)
			}
			// A directory removed and made again needs a new watch
			// (adding a watched one again changes nothing).
			w.dirs = map[string]bool{}
			w.mu.Unlock()
			slices.Sort(keys)
			for _, k := range keys {
				w.watch(k)
				w.restore(k)
			}
		}
	}
}

func (w *watcher) restore(key string) {
	if _, err := w.m.Restore(key); err != nil && reason.CodeOf(err) == "" {
		w.m.opts.Logger.Warn("mirror: could not check or restore", "document", key, "error", err)
	}
}

// Refresh writes the mirror of every document s holds (the documents' latest
// versions) and returns what it did, in key order. It stops at the first
// error of the store; a mirror that cannot be written is reported in the
// returned error after the others were tried.
func (m *Mirror) Refresh(ctx context.Context, s store.Store) ([]Outcome, error) {
	keys, err := s.Keys(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	var outs []Outcome
	var werrs []error
	for _, k := range keys {
		d, err := s.Get(ctx, k)
		if reason.CodeOf(err) == reason.NotFound {
			continue
		}
		if err != nil {
			return outs, err
		}
		m.RemoveStaleTempsOnce(k)
		o, err := m.Write(d)
		if err != nil {
			werrs = append(werrs, err)
			continue
		}
		outs = append(outs, o)
	}
	return outs, errors.Join(werrs...)
}
