package asdd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/store"
)

// Encoding a manifest step by step (and ApplyFinalized gives what Apply
// gives on a manifest Apply made).
//
// Encoding a manifest step by step (Encoded.Next) gives exactly what a full
// encoding gives, and the patch it returns turns the previous value into the
// next one, for random sequences of operations.
func TestPropertyEncodedNext(t *testing.T) {
	cfg := DefaultConfig()
	rapid.Check(t, func(t *rapid.T) {
		m := New()
		m.Extra = Extra{"zz_tool": json.RawMessage(`{ "kept" : true }`)}
		e, err := NewEncoded(m)
		if err != nil {
			t.Fatal(err)
		}
		now := fixedNow
		for range rapid.IntRange(1, maxSteps).Draw(t, "steps") {
			op := genOp(t, e.Manifest)
			now = now.Add(time.Duration(rapid.IntRange(0, 1200).Draw(t, "seconds")) * time.Second)
			out, err := Apply(e.Manifest, op, cfg, now)
			fout, ferr := ApplyFinalized(e.Manifest, op, cfg, now)
			if (err == nil) != (ferr == nil) {
				t.Fatalf("%T: Apply error %v, ApplyFinalized error %v", op, err, ferr)
			}
			if err != nil {
				continue
			}
			a, _ := json.Marshal(out.Manifest)
			b, _ := json.Marshal(fout.Manifest)
			if string(a) != string(b) {
				t.Fatalf("%T: ApplyFinalized gave\n%s\nApply\n%s", op, b, a)
			}
			ne, patch, err := e.Next(out.Manifest)
			_, fullErr := Encode(out.Manifest)
			if (err == nil) != (fullErr == nil) {
				t.Fatalf("%T: Next error %v, Encode error %v", op, err, fullErr)
			}
			if err != nil {
				continue
			}
			want, err := json.Marshal(out.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			if string(ne.Raw) != string(want) {
				t.Fatalf("%T: Next encoded\n%s\nwant\n%s", op, ne.Raw, want)
			}
			if patch == nil {
				t.Fatalf("%T: no patch for an Apply result", op)
			}
			got, err := store.ApplyPatch(e.Raw, patch)
			if err != nil {
				t.Fatalf("%T: patch %s: %v", op, patch, err)
			}
			gs, _ := store.SumOf(got)
			ws, _ := store.SumOf(want)
			if gs != ws {
				t.Fatalf("%T: patch %s gives\n%s\nwant\n%s", op, patch, got, want)
			}
			e = ne
		}
	})
}

// A changed slice that breaks the schema is refused by Next, naming it.
func TestEncodedNextValidatesChangedSlice(t *testing.T) {
	m := New()
	m.Slices = append(m.Slices, &Slice{SliceID: "S1", Status: Spec})
	e, err := NewEncoded(m)
	if err != nil {
		t.Fatal(err)
	}
	next := *m
	next.Slices = []*Slice{{SliceID: "S1", Status: Spec, CCS: ptr(1.5)}}
	if _, _, err := e.Next(&next); err == nil || !strings.Contains(err.Error(), "/slices/0/ccs") {
		t.Fatalf("Next accepted a CCS of 1.5 or did not name it: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
