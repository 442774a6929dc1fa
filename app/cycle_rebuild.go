package app

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/cycle/progress"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// rebuildCycle restores a cycle whose document is missing, unreadable or
// invalid from its progress files (.workflow/.cycle/<id>.progress/, the
// seed's rebuildState), which the service reads itself: a human decision.
// A cycle that was still going comes back paused with an open blocker
// BLK-REBUILD. A damaged document that the store cannot recover, and that
// has no journal, is moved aside to <id>.json.corrupt-<time> first (never
// overwritten); a readable, valid cycle is never replaced.
func (l *Local) rebuildCycle(ctx context.Context, req wire.CycleRequest, actor string) (*wire.CycleResponse, error) {
	if CallerOf(ctx) == Agent {
		return nil, errHuman("rebuilding a cycle")
	}
	id := req.ID
	if err := cycle.CheckID(id); err != nil {
		return nil, err
	}
	if len(req.Args) > 0 && string(req.Args) != "{}" && string(req.Args) != "null" {
		return nil, reason.New(reason.InvalidInput, "rebuild takes no args: the cycle is rebuilt from its progress files")
	}
	if req.IfRevision != nil {
		return nil, reason.New(reason.InvalidInput, "rebuild takes no if_revision: it only restores a lost or damaged cycle")
	}
	if !l.hasRoot() {
		return nil, reason.New(reason.InvalidInput, "rebuild reads the cycle's progress files: the service has no project root")
	}
	root, err := os.OpenRoot(l.o.Root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	defer root.Close()
	key := cycle.Key(id)
	movedAside := ""
	doc, err := l.o.Store.Get(ctx, key)
	switch {
	case reason.CodeOf(err) == reason.CorruptState:
		// The store could not recover the document. With a journal, the
		// journal itself is damaged: that is for verify and a human. Without
		// one, keep the damaged file aside (never overwrite it) and rebuild.
		journal := path.Join(cycle.Dir, id+".journal.ndjson")
		if _, serr := root.Stat(journal); serr == nil {
			return nil, fmt.Errorf("%w; its journal %s exists, so rebuild leaves it alone (see custodian verify %s)", err, journal, key)
		}
		if jl, ok := l.o.Store.(journalLister); ok {
			files, _ := jl.JournalFiles(key)
			// Its journal proper, not the anchor or marks left beside a
			// lost one.
			files = slices.DeleteFunc(files, func(f string) bool { return !strings.HasSuffix(f, ".ndjson") })
			if len(files) > 0 {
				return nil, fmt.Errorf("%w; its journal (%s) exists, so rebuild leaves it alone (see custodian verify %s)", err, strings.Join(files, ", "), key)
			}
		}
		if _, serr := root.Lstat(key); serr == nil {
			aside := key + ".corrupt-" + l.o.Now().UTC().Format("20060102T150405Z")
			if rerr := root.Rename(key, aside); rerr != nil {
				return nil, fmt.Errorf("%w (and could not move it aside: %v)", err, rerr)
			}
			movedAside = aside
		} // else gone whole, after it was committed here (the witness says so)
	case err == nil && doc.Exists():
		if _, derr := DecodeCycle(id, doc.Value); derr == nil {
			return nil, reason.New(reason.InvalidTransition, "cycle %s exists and is valid; rebuild only restores a lost or damaged cycle", id)
		}
	case err != nil && reason.CodeOf(err) != reason.NotFound:
		return nil, err
	}
	files, err := progress.Read(root, id)
	if err != nil {
		return nil, err
	}
	rec, err := progress.Parse(files)
	if err != nil {
		return nil, err
	}
	st, err := cycle.Restore(id, rec, l.o.Now())
	if err != nil {
		return nil, err
	}
	raw, err := cycle.Encode(st)
	if err != nil {
		return nil, err
	}
	found := make([]string, 0, len(files))
	for _, f := range progress.Files {
		if _, ok := files[f]; ok {
			found = append(found, f)
		}
	}
	summary := fmt.Sprintf("rebuilt from %s (%s)", cycle.ProgressDir(id), strings.Join(found, ", "))
	if err := l.startAnew(key); err != nil {
		return nil, err
	}
	res, err := l.o.Store.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		if cur.Exists() {
			if _, err := DecodeCycle(id, cur.Value); err == nil {
				return store.Change{}, reason.New(reason.Conflict, "cycle %s was written while it was being rebuilt; nothing rebuilt", id)
			}
		}
		return store.Change{Value: raw, Actor: actor, Reason: summary,
			Events: CycleEvents(cycle.Event{Type: "cycle.rebuild", Summary: summary})}, nil
	}, store.Create())
	if err != nil {
		return nil, err
	}
	synced := l.syncCycle(ctx, id, res.Revision, st)
	return &wire.CycleResponse{CycleID: id, Revision: res.Revision, Event: "cycle.rebuild", Summary: summary, Cycle: st, Synced: synced, MovedAside: movedAside}, nil
}
