package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
)

// A file journal written by a daemon's group commit carries a sum only on
// each batch's last record; a journal whose tail was cut after a record
// without one still imports and verifies, vouched for by its replay.
func TestImportLastRecordWithoutSum(t *testing.T) {
	ctx := context.Background()
	s := open(t, etcd.Options{})
	sum1, err := store.SumOf([]byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	recs := []store.Record{
		{Rev: 1, Time: now, Actor: "a", Patch: []byte(`[{"op":"add","path":"","value":{"a":1}}]`), Sum: sum1},
		{Rev: 2, Time: now, Actor: "a", Patch: []byte(`[{"op":"replace","path":"/a","value":2}]`)},
	}
	prev := ""
	for i := range recs {
		if _, err := recs[i].Seal(prev); err != nil {
			t.Fatal(err)
		}
		prev = recs[i].Hash
	}
	const key = "state/batch.json"
	if err := s.Import(ctx, key, recs, []byte(`{"a":2}`)); err != nil {
		t.Fatalf("import: %v", err)
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatalf("verify: %v", err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 2 {
		t.Fatalf("get: rev %d, %v", doc.Revision, err)
	}
	// A value the journal does not reproduce is still refused.
	if err := s.Import(ctx, "state/other.json", recs, []byte(`{"a":3}`)); err == nil {
		t.Fatal("imported a value its journal does not reproduce")
	}
}
