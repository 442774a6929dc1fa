package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// A cycle's coordination logs and progress files are written by the
// application layer (in the daemon when one runs), never by the caller:
// the same records land whole in the same log, the same bad input is
// refused with nothing appended, whichever implementation serves.
func TestCycleFilesSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		var got []string
		const id = "cycle-v1-20261125T120000-abcdef"
		note := func(r *wire.CycleResponse, err error) {
			if err != nil {
				got = append(got, "error "+string(reason.CodeOf(err))+": "+err.Error())
				return
			}
			got = append(got, r.Event+": "+r.Summary)
		}
		appendTo := func(log string, records ...string) (*wire.CycleResponse, error) {
			a := wire.CycleAppend{Log: log}
			for _, r := range records {
				a.Records = append(a.Records, json.RawMessage(r))
			}
			args, _ := json.Marshal(a)
			return p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "append", Args: args})
		}
		note(appendTo("messages.ndjson", `{"a":1}`)) // no such cycle yet
		args, _ := json.Marshal(wire.CycleCreate{Task: "OAuth"})
		note(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "create", Args: args}))
		note(appendTo("messages.ndjson", `{"from": "ra",  "msg": "hi"}`, `[1, 2]`))
		// Too long for a record (over the wire: for a request body too).
		if _, err := appendTo("messages.ndjson", `"`+strings.Repeat("x", 1<<20)+`"`); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("an over-long record: %v, want INVALID_INPUT", err)
		}
		note(appendTo("../escape.ndjson", `{}`))
		note(appendTo("notes.txt", `{}`))
		note(appendTo("messages.ndjson"))
		note(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "append", Args: json.RawMessage(`{"log":"m.ndjson","records":[{}],"extra":1}`)}))

		// A progress file removed behind the cycle's back is written again.
		status := filepath.Join(p.root, ".workflow", ".cycle", id+".progress", "coordination", "timeline.md")
		if err := os.Remove(status); err != nil {
			t.Fatal(err)
		}
		note(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "sync"}))
		note(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "sync"}))
		note(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: "cycle-v1-20261125T120000-zzzzzz", Op: "sync"}))

		log, err := os.ReadFile(filepath.Join(p.root, ".workflow", ".cycle", id+".progress", "messages.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "{\"from\":\"ra\",\"msg\":\"hi\"}\n[1,2]\n"; string(log) != want {
			t.Errorf("log = %q, want %q", log, want)
		}
		if _, err := os.Stat(status); err != nil {
			t.Errorf("sync did not write the timeline again: %v", err)
		}
		return append(got, p.files(t)...)
	})
}

// A coordination log is appended to only as a regular file of its own,
// reached through no symlink: a symlinked directory or file planted in the
// cycle's progress directory (pointing at the ASDD manifest's journal) or
// a hard link to that journal is refused with INVALID_INPUT, and the
// journal is untouched, whichever door asks.
func TestCycleAppendNeverFollowsASymlinkOrHardLink(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		const id = "cycle-v1-20261125T120000-abcdef"
		must(t)(p.svc.ASDD(ctx, asdd.Init{Sprint: "S1"}))
		args, _ := json.Marshal(wire.CycleCreate{Task: "OAuth"})
		if _, err := p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "create", Args: args}); err != nil {
			t.Fatal(err)
		}
		journal := filepath.Join(p.root, ".asdd", "state", "journal.ndjson")
		before, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		progress := filepath.Join(p.root, ".workflow", ".cycle", id+".progress")
		if err := os.Symlink("../../../.asdd/state", filepath.Join(progress, "logs")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../../.asdd/state/journal.ndjson", filepath.Join(progress, "file.ndjson")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../../.asdd/state/new.ndjson", filepath.Join(progress, "dangling.ndjson")); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(journal, filepath.Join(progress, "hard.ndjson")); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, log := range []string{"logs/journal.ndjson", "logs/sub/new.ndjson", "file.ndjson", "dangling.ndjson", "hard.ndjson", "fine.ndjson"} {
			a, _ := json.Marshal(wire.CycleAppend{Log: log, Records: []json.RawMessage{json.RawMessage(`{"rev":99,"evil":true}`)}})
			_, err := p.agent.UpdateCycle(p.ctx(true), wire.CycleRequest{ID: id, Op: "append", Args: a})
			got = append(got, log+": "+string(reason.CodeOf(err)))
		}
		want := []string{"logs/journal.ndjson: INVALID_INPUT", "logs/sub/new.ndjson: INVALID_INPUT", "file.ndjson: INVALID_INPUT",
			"dangling.ndjson: INVALID_INPUT", "hard.ndjson: INVALID_INPUT", "fine.ndjson: "}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("appends:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		after, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		if string(after) != string(before) {
			t.Errorf("the manifest's journal changed through the progress directory:\n%s", after[len(before):])
		}
		for _, f := range []string{".asdd/state/new.ndjson", ".asdd/state/sub"} {
			if _, err := os.Lstat(filepath.Join(p.root, f)); err == nil {
				t.Errorf("%s was created through a symlink", f)
			}
		}
		// The manifest is still usable.
		must(t)(p.svc.ASDD(ctx, asdd.AddSlice{ID: "SLICE-001", Name: "login"}))
		return got
	})
}
