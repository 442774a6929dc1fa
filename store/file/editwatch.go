package file

import (
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// Direct edits in Hold mode. The daemon knows the snapshot file as it last
// wrote or read it (hold.snapID, hold.snapFile); anything else there is a
// direct edit, moved aside and settled by settleEdit (direct.go) like one an
// open finds. It looks when the edit watcher sees the file change (fsnotify
// on the documents' directories, and a poll once a second in case an event
// is missed), right before each snapshot rewrite, and at Close.

// watchEdits puts the document (loaded in Hold mode) under the edit
// watcher.
func (d *doc) watchEdits() {
	dm := d.s.daemon
	snap := filepath.Join(d.s.dir, filepath.FromSlash(d.p.snap))
	dm.mu.Lock()
	dm.snaps[snap] = d
	dm.mu.Unlock()
	if dm.w != nil {
		if err := dm.w.Add(filepath.Dir(snap)); err != nil {
			d.logf("directory not watched: direct edits there are found by polling once a second", "dir", filepath.Dir(snap), "error", err)
		}
	}
}

// editLoop is the edit watcher: it checks a document soon after its
// snapshot changed, and every document once a second.
func (s *Store) editLoop() {
	dm := s.daemon
	var events <-chan fsnotify.Event
	var errs <-chan error
	if dm.w != nil {
		events, errs = dm.w.Events, dm.w.Errors
		defer dm.w.Close()
	}
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	// Events come in bursts (create, write, rename): settle once they
	// stop for a moment.
	due := map[*doc]bool{}
	var settle <-chan time.Time
	for {
		select {
		case <-dm.stop:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			dm.mu.Lock()
			d := dm.snaps[ev.Name]
			dm.mu.Unlock()
			if d != nil && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0 {
				due[d] = true
				settle = time.After(20 * time.Millisecond)
			}
			continue
		case err, ok := <-errs:
			if !ok {
				errs = nil
			} else {
				s.opts.Logger.Warn("file watcher", "error", err)
			}
			continue
		case <-settle:
		case <-poll.C:
			dm.mu.Lock()
			for _, d := range dm.snaps {
				due[d] = true
			}
			dm.mu.Unlock()
		}
		for d := range due {
			d.mu.Lock()
			d.held.checkEdit()
			d.mu.Unlock()
		}
		clear(due)
		settle = nil
	}
}

// checkEdit settles a direct edit of a document the daemon holds (under
// doc.mu), and the edits the snapshot writer moved aside, then writes the
// document's value (committed or adopted) back in place.
func (h *hold) checkEdit() {
	d := h.d
	if !h.locked || h.closed || !h.active.Load() {
		return
	}
	h.snapMu.Lock()
	h.captureEdit()
	edits, missing := h.queued, !h.snapID.exists
	h.queued = nil
	if len(edits) > 0 || missing {
		h.snapRev = 0 // rewrite it, whatever revision it held
	}
	h.snapMu.Unlock()
	if len(edits) == 0 && !missing {
		return
	}
	for _, e := range edits {
		d.edit = e
		d.settleEdit()
	}
	if err := h.flushSnapshot(true); err != nil {
		d.logf("snapshot not rewritten after a direct edit; the journal holds every commit", "error", err)
	}
	d.tellEdits()
}

// captureEdit looks at the snapshot file (under snapMu): when it is not
// what the daemon last wrote or read, it is moved aside and queued for
// settling. A deleted snapshot is noted (snapID not existing) for a rewrite.
func (h *hold) captureEdit() {
	d := h.d
	id, err := d.stat(d.p.snap)
	if err != nil || id == h.snapID {
		return
	}
	if !id.exists {
		h.snapID = id
		return
	}
	b, err := d.readFile(d.p.snap)
	if err == nil && b == nil {
		h.snapID = fileID{}
		return
	}
	if err == nil && h.holdsLatest(b) {
		h.snapID, h.snapFile = id, store.HashBytes(b) // touched, or the same value written differently
		return
	}
	if h.setAside(d.p.snap, b, err, h.snapRev) {
		h.snapID = fileID{}
	}
}

// holdsLatest reports whether b, found in the snapshot file, is what the
// daemon wrote there or the latest synced value written differently.
func (h *hold) holdsLatest(b []byte) bool {
	if store.HashBytes(b) == h.snapFile {
		return true
	}
	v := h.durable.Load()
	pv, err := jsonval.ParseValue(b, h.d.s.opts.Limits)
	if err != nil || !v.exists() {
		return false
	}
	sum := v.sum
	if vb, err := v.val.bytes(); sum == "" && err == nil {
		sum, _ = store.SumOf(vb)
	}
	return sum == pv.Sum
}

// setAside moves name (the snapshot, or the link to the one replaced) aside
// as a direct edit of the snapshot made on revision base, and queues it
// for settling: its content is b, or it could not be read (rerr: kept as a
// corrupt snapshot). false: it could not be moved.
func (h *hold) setAside(name string, b []byte, rerr error, base uint64) bool {
	d := h.d
	perr := rerr
	if perr == nil {
		_, perr = jsonval.ParseValue(b, d.s.opts.Limits)
	}
	kind := "unjournaled"
	if perr != nil {
		kind = "corrupt"
	}
	aside := d.p.snap + "." + kind + "-" + stamp(d.s.opts.Now())
	if err := d.s.root.Rename(name, aside); err != nil {
		d.logf("direct edit not moved aside", "file", name, "error", err)
		return false
	}
	_ = d.syncDir()
	e := &capturedEdit{aside: aside, value: b, base: base}
	if perr != nil {
		e = &capturedEdit{aside: aside, err: perr}
	}
	h.queued = append(h.queued, e)
	return true
}

// guardSnapshot runs right before the snapshot writer replaces the file
// (under snapMu): a direct edit there is moved aside, and the file replaced
// is kept by a hard link (<snap>.replacing) until the rename is done, so an
// edit written in place meanwhile is kept too. The edits wait in queued for
// the watcher. It returns what to run once the file is replaced (nil: no
// link, no file or links unsupported).
func (h *hold) guardSnapshot() func() {
	d := h.d
	h.captureEdit()
	link := d.p.snap + ".replacing"
	_ = d.s.root.Remove(link)
	if !h.snapID.exists || d.s.root.Link(d.p.snap, link) != nil {
		return nil
	}
	was, wasFile, base := h.snapID, h.snapFile, h.snapRev
	return func() {
		id, err := d.stat(link)
		if err != nil || !id.exists {
			return
		}
		if id.size != was.size || id.mtime != was.mtime || id.ino != was.ino {
			if b, err := d.readFile(link); err == nil && b != nil && store.HashBytes(b) != wasFile {
				h.setAside(link, b, nil, base)
				return
			}
		}
		_ = d.s.root.Remove(link)
	}
}
