package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/custodian-dev/custodian/internal/pidfile"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Hold mode (Options.Hold) is the daemon's way of using the files: one
// process owns every document until Close, so it keeps the values in
// memory, lets concurrent commits share one journal fsync (group commit) and
// rewrites snapshots in the background. A crash can only leave a snapshot
// behind its journal, which recovery replays.

// daemon is the store-wide state of Hold mode: the pid file's lock, and
// two goroutines, the snapshot writer and the edit watcher (editwatch.go).
type daemon struct {
	pid  *pidfile.Lock
	stop chan struct{}
	wg   sync.WaitGroup

	w     *fsnotify.Watcher // on the documents' directories; nil: poll only
	mu    sync.Mutex
	snaps map[string]*doc // absolute snapshot path -> document (guarded by mu)
}

// version is one revision of a document's value, as kept in memory.
type version struct {
	rev  uint64
	val  *value // nil: no document
	hash string // hash of the revision's journal record
	sum  string // canonical sum of the value when known
}

// exists reports whether the version has a value.
func (v *version) exists() bool { return v != nil && v.val != nil }

// hold is a document's Hold-mode state (nil outside Hold mode): group
// commit (the syncer), the paced snapshot writer, and the daemon's view of
// the files it owns.
type hold struct {
	d *doc

	// Guarded by doc.mu. Records are sealed (prev, hash) as they are
	// queued, so the syncer only writes and syncs: sealing a large group
	// (≈ 4 µs a record) kept the journal idle while every writer waited.
	locked, closed bool   // the document's flock is held; the store closed
	sbuf           []byte // sealing scratch

	// The lines of the commits queued for the next journal write and the
	// version of the last, and the groups: a commit waits on the channel of
	// the group that holds its record, closed once it is synced. Guarded
	// by pmu.
	pmu    sync.Mutex
	pbuf   []byte
	next   *version      // nil: nothing queued
	open   chan struct{} // the group being queued
	flight chan struct{} // the group the syncer took last
	taken  uint64        // the last revision the syncer took

	// The syncer's: it writes and syncs one group at a time and seals the
	// live journal as a segment past SegmentBytes.
	kick, quit, syncerDone chan struct{}
	jf                     *os.File // the live journal, open for appending
	wbuf                   []byte   // the lines of the group it writes
	jExists                bool     // the live journal exists (else opening creates it)
	size                   int64    // bytes in the live journal
	fileFirst              uint64   // the live journal's first revision
	anchor                 *os.File // the anchor file, kept open (anchor.go)
	anchorSized            bool     // it holds one padded line
	rotateAt               int64    // after a failed rotation: the size to try again at

	active  atomic.Bool             // the document is loaded in Hold mode
	latest  atomic.Pointer[version] // the last queued revision
	durable atomic.Pointer[version] // the last synced revision

	failed atomic.Pointer[error] // why a group failed: every later commit fails too

	// The snapshot writer's, guarded by snapMu (one rewrite at a time).
	snapMu   sync.Mutex
	snapRev  uint64        // the revision the snapshot file holds
	snapDisk atomic.Uint64 // snapRev for the syncer: it seals a journal only once the snapshot holds one of its revisions
	snapNext time.Time     // no background rewrite before this
	// The snapshot file as the daemon last wrote or read it: anything
	// else there is a direct edit (editwatch.go); the edits moved aside
	// before a rewrite wait in queued for the watcher to settle them.
	snapID   fileID
	snapFile string
	queued   []*capturedEdit
}

// startDaemon takes the daemon lock and starts the snapshot writer.
func (s *Store) startDaemon() error {
	pid, err := pidfile.Take(s.root, s.opts.PidFile)
	if err != nil {
		return err
	}
	dm := &daemon{pid: pid, stop: make(chan struct{}), snaps: map[string]*doc{}}
	if dm.w, err = fsnotify.NewWatcher(); err != nil {
		s.opts.Logger.Warn("file watcher unavailable: direct edits are found by polling once a second", "error", err)
	}
	s.daemon = dm
	dm.wg.Go(s.snapshotLoop)
	dm.wg.Go(s.editLoop)
	return nil
}

// AnnounceDaemon records, in Hold mode, where the daemon can be reached
// (package pidfile), so that a command that finds a lock held by the
// daemon names it instead of waiting.
func (s *Store) AnnounceDaemon(addrs ...string) error {
	if s.daemon == nil {
		return nil
	}
	return s.daemon.pid.Announce(addrs...)
}

// daemonHolder returns a CONFLICT naming the daemon (pid, addresses) that
// holds the project, for a command that found lock held; nil when no daemon
// runs (another command holds it for one commit: wait for it).
func (s *Store) daemonHolder(lock string) error {
	pid, addrs, held := pidfile.Holder(s.root, s.opts.PidFile)
	if !held {
		return nil
	}
	where := "no socket: it was started with --socket \"\" and, if it listens on TCP, is reached with --server URL"
	if len(addrs) > 0 {
		where = "listening on " + strings.Join(addrs, ", ")
	}
	return reason.New(reason.Conflict, "a custodian daemon (pid %s, %s) holds %s for as long as it runs: send this command to it (--server URL or $CUSTODIAN_SERVER), or stop it", pid, where, lock).
		With("pid", pid).With("addresses", addrs)
}

// snapshotLoop rewrites the snapshots that are behind, at most once per
// SnapshotInterval.
func (s *Store) snapshotLoop() {
	t := time.NewTicker(s.opts.SnapshotInterval)
	defer t.Stop()
	for {
		select {
		case <-s.daemon.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		docs := slices.Collect(maps.Values(s.docs))
		s.mu.Unlock()
		for _, d := range docs {
			if !d.held.isActive() {
				continue
			}
			if err := d.held.flushSnapshot(false); err != nil {
				d.logf("snapshot not rewritten; the journal holds every commit and the next open replays it", "error", err)
			}
		}
	}
}

// stopDaemon flushes and releases everything Hold mode holds.
func (s *Store) stopDaemon(docs []*doc) error {
	close(s.daemon.stop)
	s.daemon.wg.Wait()
	var errs []error
	for _, d := range docs {
		errs = append(errs, d.held.stop())
	}
	return errors.Join(append(errs, s.daemon.pid.Release())...)
}

// stop flushes the document and releases its syncer, files and lock.
func (h *hold) stop() error {
	d := h.d
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	if h.locked {
		// A direct edit made while the daemon ran is settled before
		// it stops, not left on disk for the next command.
		h.checkEdit()
		if v := h.latest.Load(); v != nil {
			err := h.awaitDurable(v.rev)
			if err == nil {
				err = h.flushSnapshot(true)
			}
			errs = append(errs, err)
		}
		if h.quit != nil {
			close(h.quit)
			<-h.syncerDone
			h.quit = nil
		}
		if h.jf != nil {
			errs = append(errs, h.jf.Close())
			h.jf = nil
		}
		if h.anchor != nil {
			h.anchor.Close()
			h.anchor, h.anchorSized = nil, false
		}
		errs = append(errs, d.flock.Unlock())
		h.locked = false
	}
	h.closed = true
	h.active.Store(false)
	return errors.Join(errs...)
}

// isActive reports whether the document is loaded in Hold mode.
func (h *hold) isActive() bool { return h != nil && h.active.Load() }

// isLocked reports whether Hold mode holds the document's lock (doc.mu).
func (h *hold) isLocked() bool { return h != nil && h.locked }

// start starts Hold mode for a freshly loaded document (under doc.mu).
func (h *hold) start() {
	d := h.d
	// Values in memory are kept compact, as proposers write them: the
	// snapshot's indentation would double a large document's size, and a
	// proposer that re-encodes the value it read gets the same bytes.
	if d.cur != nil && d.cur.raw != nil {
		var buf bytes.Buffer
		buf.Grow(len(d.cur.raw))
		if json.Compact(&buf, d.cur.raw) == nil {
			d.cur = bytesValue(buf.Bytes())
		}
	}
	v := &version{rev: d.rev, val: d.cur, sum: d.sum}
	if d.last != nil {
		v.hash = d.last.Hash
	}
	h.latest.Store(v)
	h.durable.Store(v)
	h.snapRev, h.taken = d.rev, d.rev
	h.snapDisk.Store(d.rev)
	h.snapID, h.snapFile = d.snap.id, d.snap.hash
	h.jExists, h.size, h.fileFirst = d.j.id.exists, d.j.id.size, d.j.liveFirst
	h.next, h.pbuf = nil, nil
	h.open = make(chan struct{})
	h.kick = make(chan struct{}, 1)
	h.quit = make(chan struct{})
	h.syncerDone = make(chan struct{})
	go h.syncLoop()
	h.active.Store(true)
}

// append seals a commit's record, queues it for the syncer and makes its
// value the latest (under doc.mu); the caller then awaits it.
func (h *hold) append(rec *store.Record, prev string, v *version) (*store.Record, error) {
	d := h.d
	if h.closed {
		return nil, errClosed
	}
	lines, err := rec.SealMAC(h.sbuf[:0], prev, d.s.key)
	if err != nil {
		return nil, err
	}
	if cap(lines) <= 1<<20 {
		h.sbuf = lines
	}
	v.rev, v.hash = rec.Rev, rec.Hash
	h.pmu.Lock()
	h.pbuf = append(h.pbuf, lines...)
	h.next = v
	h.pmu.Unlock()
	d.rev, d.last = rec.Rev, rec
	d.cur, d.sum, d.adopted = v.val, v.sum, false
	h.latest.Store(v)
	return rec, nil
}

// durableRev is the last revision watchers may see: in Hold mode the last
// synced one, otherwise every complete record.
func (d *doc) durableRev() uint64 {
	if !d.s.opts.Hold {
		return ^uint64(0)
	}
	if v := d.held.durable.Load(); v != nil {
		return v.rev
	}
	return 0
}

// awaitDurable returns once revision rev is synced: the syncer takes every
// commit queued so far as one group (group commit), and each waiter sleeps
// on the channel of the group that holds its record, woken once it is
// synced. Outside Hold mode (h nil) commits are synced before they are
// applied: it returns at once.
func (h *hold) awaitDurable(rev uint64) error {
	if h == nil {
		return nil
	}
	for {
		// A failed write or sync fails every commit not yet durable, also
		// one that reaches here only after Close.
		if err := h.syncFailure(); err != nil {
			return fmt.Errorf("sync journal %s (commit outcome unknown until reopened): %w", h.d.p.journal, err)
		}
		if !h.active.Load() {
			return nil // after Close, which synced every queued commit
		}
		h.pmu.Lock()
		if v := h.durable.Load(); v != nil && v.rev >= rev {
			h.pmu.Unlock()
			return nil
		}
		// The syncer handles one group at a time and publishes it before
		// it takes the next: a taken revision not yet durable is in the
		// group in flight; any other is queued for the next one.
		ch := h.flight
		if rev > h.taken {
			ch = h.open
			select {
			case h.kick <- struct{}{}:
			default: // already woken
			}
		}
		h.pmu.Unlock()
		<-ch
	}
}

// syncFailure is why a group failed (nil: none, or outside Hold mode).
func (h *hold) syncFailure() error {
	if h == nil {
		return nil
	}
	if p := h.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// syncLoop is the document's syncer: it takes the commits queued as one
// group, writes, fsyncs and publishes it, and wakes its waiters.
func (h *hold) syncLoop() {
	defer close(h.syncerDone)
	for {
		select {
		case <-h.kick:
		case <-h.quit:
			return
		}
		h.pmu.Lock()
		top, lines := h.next, h.pbuf
		// The buffers take turns: the one written last time (unless
		// unusually large) takes the next group's lines.
		h.next, h.pbuf = nil, h.wbuf[:0]
		if cap(h.pbuf) > 4<<20 {
			h.pbuf = nil
		}
		done := h.open
		h.open, h.flight = make(chan struct{}), done
		if top != nil {
			h.taken = top.rev
		}
		h.pmu.Unlock()
		synced := false
		if top != nil && h.syncFailure() == nil {
			if err := h.syncGroup(top, lines); err != nil {
				// A failed write or sync leaves the journal's tail unknown:
				// fail every waiter and refuse writes until reopened.
				h.failed.Store(&err)
			} else {
				synced = true
			}
		}
		h.wbuf = lines
		close(done)
		if synced {
			h.maybeRotate()
		}
	}
}

// flushSnapshot rewrites the snapshot with the latest synced value if it is
// behind. Unless forced it waits for its pacing: a rewrite starts at least
// SnapshotInterval after the previous one started and nine times its
// duration after it ended (a tenth of the time at most). A value whose
// record carries no sum is named by a mark (mark.go), durable before the
// snapshot is replaced.
func (h *hold) flushSnapshot(force bool) error {
	d := h.d
	// A plugin's cooperative lock (state.json.lock) is taken before
	// snapMu, never while holding it: a plugin holding its lock must not
	// stall the readers and the edit watcher that take snapMu. The
	// background writer only tries it and comes back at its next turn.
	if d.coop != nil {
		if force {
			if err := d.coopLock(context.Background()); err != nil {
				return err
			}
		} else if err := d.lockFile(d.p.coopLock); err != nil {
			return err
		} else if ok, err := d.coop.TryLock(); err != nil {
			return fmt.Errorf("lock %s: %w", d.p.coopLock, err)
		} else if !ok {
			return nil // a plugin holds it: the next turn
		}
		defer d.coop.Unlock()
	}
	h.snapMu.Lock()
	defer h.snapMu.Unlock()
	v := h.durable.Load()
	if !v.exists() || v.rev <= h.snapRev {
		return nil
	}
	start := time.Now()
	if !force && start.Before(h.snapNext) {
		return nil
	}
	fileHash := "" // the SHA-256 of the new snapshot file's bytes
	file := ""     // the mark's file hash, when a mark names the new snapshot
	var guard func()
	before := func() error {
		if v.sum == "" {
			file = fileHash
			if err := d.writeMark(mark{Rev: v.rev, Hash: v.hash, File: file}); err != nil {
				return err
			}
		}
		guard = h.guardSnapshot()
		return nil
	}
	if err := d.replaceFile(d.p.snap, d.p.tmp, "snapshot", func(f *os.File) error {
		b, err := v.val.bytes()
		if err == nil {
			b, err = store.Indent(b)
		}
		if err != nil {
			return err
		}
		fileHash = store.HashBytes(b)
		_, err = f.Write(b)
		return err
	}, before); err != nil {
		if guard != nil {
			_ = d.s.root.Remove(d.p.snap + ".replacing") // the file was not replaced
		}
		return err
	}
	if guard != nil {
		guard()
	}
	h.snapRev, d.snap.mark = v.rev, file
	h.snapDisk.Store(v.rev)
	h.snapFile = fileHash
	h.snapID = d.snap.wrote // as written: an edit right after the rename differs
	end := time.Now()
	h.snapNext = start.Add(d.s.opts.SnapshotInterval)
	if t := end.Add(9 * end.Sub(start)); t.After(h.snapNext) {
		h.snapNext = t
	}
	return nil
}

// maybeRotate seals the live journal as a segment (between two groups,
// all synced) when it is past SegmentBytes and the snapshot on disk holds
// one of its revisions or a later one, so that recovery never needs more
// than the newest segment (segment.go).
func (h *hold) maybeRotate() {
	d, last := h.d, h.durable.Load().rev
	if h.jf == nil || last < h.fileFirst || h.snapDisk.Load() < h.fileFirst {
		return // nothing to seal, or the snapshot writer catches up first
	}
	if !d.sealPast(h.fileFirst, last, h.size, &h.rotateAt) {
		return
	}
	if err := h.jf.Close(); err != nil {
		d.logf("closing a sealed journal segment", "error", err)
	}
	h.jf, h.jExists, h.size, h.fileFirst = nil, false, 0, last+1
}

// syncGroup writes a group (the lines of its records, sealed when queued,
// up to target's) and fsyncs it, then publishes it as durable.
func (h *hold) syncGroup(target *version, buf []byte) error {
	d := h.d
	start := time.Now()
	jf, err := h.openLive()
	if err == nil {
		err = d.fault("journal.write")
	}
	if err == nil {
		if _, err = jf.Write(buf); err != nil {
			if terr := jf.Truncate(h.size); terr != nil {
				err = fmt.Errorf("%w (and the partial write could not be cut back: %v)", err, terr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("append to journal %s: %w", d.p.journal, err)
	}
	h.size += int64(len(buf))
	if err := d.fault("journal.sync"); err != nil {
		return err
	}
	if err := jf.Sync(); err != nil {
		return err
	}
	if err := h.checkLiveJournal(); err != nil {
		return err
	}
	before := h.durable.Load()
	h.durable.Store(target)
	d.notify()
	// After the waiters are woken: the anchor only follows the synced
	// journal, it need not precede the acknowledgement.
	d.writeAnchor(target.rev, target.hash)
	if f := d.s.opts.OnSync; f != nil {
		f(int(target.rev-before.rev), int64(len(buf)), time.Since(start))
	}
	return nil
}

// checkLiveJournal checks, after a group's fsync and before it is
// acknowledged, that the journal appended to is still the file at the
// journal's path: git (stash, reset, checkout) and a restored backup
// replace files by unlinking them, and a daemon appending to the old file
// would acknowledge commits no one can read. One stat per group.
func (h *hold) checkLiveJournal() error {
	d := h.d
	open, err := h.jf.Stat()
	if err != nil {
		return err
	}
	if now, err := d.s.root.Lstat(d.p.journal); err == nil && os.SameFile(open, now) {
		return nil
	}
	return reason.New(reason.CorruptState, "%s: rewound: its journal %s was replaced or removed while the daemon held it (git stash, reset or checkout, a restored backup); the commits in flight are not acknowledged and the daemon refuses writes to it: stop the daemon, then restore the files or run %s", d.p.key, d.p.journal, d.repairCommand())
}
