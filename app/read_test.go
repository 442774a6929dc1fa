package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// errText is an error as a user reads it ("" for none).
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A project without a manifest says so in one message, whichever
// implementation and whichever way in (a read, an operation).
func TestNoManifestSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		_, rerr := p.svc.Manifest(ctx)
		_, oerr := p.svc.ASDD(ctx, asdd.AddSlice{ID: "SLICE-001", Name: "login"})
		for _, err := range []error{rerr, oerr} {
			if err == nil || err.Error() != app.ErrNoManifest.Error() {
				t.Errorf("got %v, want %v", err, app.ErrNoManifest)
			}
		}
		return []string{errText(rerr), errText(oerr)}
	})
}

// The documents read the same through Local and Remote: the latest
// version, a past one, the journal, the keys (and those a verification
// of every document checks), a watch, a verification,
// and a document never committed.
func TestReadsSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		setup(t, p)
		ctx := p.ctx(false)
		var got []string
		doc, err := p.svc.Doc(ctx, asdd.Key)
		got = append(got, fmt.Sprintf("doc rev %d exists %v %s", doc.Revision, doc.Exists(), errText(err)))
		past, err := p.svc.DocAt(ctx, asdd.Key, 1)
		got = append(got, fmt.Sprintf("at 1: rev %d exists %v %s", past.Revision, past.Exists(), errText(err)))
		_, err = p.svc.DocAt(ctx, asdd.Key, 99)
		got = append(got, "at 99: "+string(reason.CodeOf(err)))
		recs, err := p.svc.History(ctx, asdd.Key, 0, 0)
		for _, r := range recs {
			got = append(got, fmt.Sprintf("record %d %s %s", r.Rev, r.Actor, r.Reason))
		}
		got = append(got, "history "+errText(err))
		keys, err := p.svc.Keys(ctx)
		got = append(got, fmt.Sprintf("keys %v %s", keys, errText(err)))
		keys, _, err = p.svc.VerifyKeys(ctx)
		got = append(got, fmt.Sprintf("verify keys %v %s", keys, errText(err)))
		wctx, cancel := context.WithCancel(ctx)
		for c, err := range p.svc.Watch(wctx, asdd.Key, 0) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("commit %d %s", c.Rev, c.Reason))
			if c.Rev == doc.Revision {
				break
			}
		}
		cancel()
		rep, err := p.svc.Verify(ctx, asdd.Key)
		got = append(got, fmt.Sprintf("verify revision %d %s", rep.Revision, errText(err)))
		none, err := p.svc.Doc(ctx, ".impl/manifest.json")
		return append(got, fmt.Sprintf("never committed: rev %d exists %v %s", none.Revision, none.Exists(), errText(err)))
	})
}

// A verification of every document checks the custodian's documents a
// file store holds without a journal too (another tool wrote it, or its
// journal was deleted), through Local and through the daemon alike.
func TestVerifyKeysListDocumentsWithoutAJournal(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		setup(t, p)
		p.write(t, ".impl/manifest.json", `{"version":"1.0.0","plan":{},"phases":[],"tasks":[]}`)
		ctx := p.ctx(false)
		keys, _, err := p.svc.VerifyKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(keys, ".impl/manifest.json") || !slices.Contains(keys, asdd.Key) {
			t.Errorf("VerifyKeys = %v, want the manifest and the task manifest written by another tool", keys)
		}
		return keys
	})
}
