package store_test

import (
	"testing"
	"time"

	"github.com/custodian-dev/custodian/store"
)

func FuzzDecodeRecord(f *testing.F) {
	r := store.Record{Rev: 1, Time: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), Actor: "a", Patch: []byte(`[{"op":"add","path":"","value":{}}]`), Sum: "sha256:00"}
	line, _ := r.Seal("")
	f.Add(line[:len(line)-1])
	f.Add([]byte(`{"rev":0}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := store.DecodeRecord(line)
		if err != nil {
			return
		}
		// A record that decodes re-seals to a record that decodes the same.
		again, err := rec.Seal(rec.Prev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := store.DecodeRecord(again[:len(again)-1])
		if err != nil || back.Hash != rec.Hash {
			t.Fatalf("re-sealed record does not decode: %v", err)
		}
	})
}
