package app

import (
	"context"
	"fmt"
	"os"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/cycle/progress"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// The cycle operations that change files, not the cycle: "sync" rewrites
// the progress files from the committed state, "append" adds records to a
// coordination log. Whichever door asks, the files are written here (in
// the daemon when one runs), never by the caller.

// syncCycleOp is the "sync" operation: the cycle's progress files
// rewritten where they differ from its committed state.
func (l *Local) syncCycleOp(ctx context.Context, req wire.CycleRequest) (*wire.CycleResponse, error) {
	st, rev, err := l.Cycle(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	wrote, err := l.syncCycleFiles(ctx, req.ID, rev, st)
	if err != nil {
		return nil, err
	}
	if wrote == nil {
		wrote = []string{}
	}
	return &wire.CycleResponse{CycleID: req.ID, Revision: rev, Event: "sync", Summary: fmt.Sprintf("synced %d progress %s", len(wrote), plural(len(wrote), "file", "files")), Cycle: st, Synced: wrote}, nil
}

// appendCycleLog is the "append" operation: records appended to one of an
// existing cycle's NDJSON coordination logs, whole lines in one durable
// write. Every record is checked here: one JSON value each, none too long;
// one bad record and nothing is appended.
func (l *Local) appendCycleLog(ctx context.Context, req wire.CycleRequest) (*wire.CycleResponse, error) {
	if err := cycle.CheckID(req.ID); err != nil {
		return nil, err
	}
	var a wire.CycleAppend
	if err := wire.DecodeStrict(req.Args, &a); err != nil {
		return nil, err
	}
	rel, err := cycle.LogPath(req.ID, a.Log)
	if err != nil {
		return nil, err
	}
	if len(a.Records) == 0 {
		return nil, reason.New(reason.InvalidInput, "nothing to append: no records")
	}
	records := make([][]byte, len(a.Records))
	for i, r := range a.Records {
		if records[i], err = cycle.CompactRecord(r); err != nil {
			return nil, reason.New(reason.InvalidInput, "record %d: %v (nothing appended)", i+1, err)
		}
	}
	st, rev, err := l.Cycle(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	if !l.hasRoot() {
		return nil, reason.New(reason.InvalidInput, "this custodian has no project directory to append to")
	}
	root, err := os.OpenRoot(l.o.Root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	defer root.Close()
	if err := progress.Append(root, rel, records); err != nil {
		return nil, err
	}
	return &wire.CycleResponse{CycleID: req.ID, Revision: rev, Event: "append", Summary: fmt.Sprintf("appended %d %s to %s", len(records), plural(len(records), "record", "records"), rel),
		Cycle: st, Synced: []string{}, Log: rel, Appended: len(records)}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
