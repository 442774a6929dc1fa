package impl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// manifestOf builds an encoded manifest of n tasks in n/10 phases.
func manifestOf(b *testing.B, n int) []byte {
	m := mustNew(b)
	for i := range n {
		add(b, m, fmt.Sprintf("%d.%d", i/10+1, i%10+1), i/10+1)
	}
	raw, err := Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkUpdateStatus measures the domain's share of one update-status:
// decode the manifest, apply the update, encode it again (the store's share,
// journal and snapshot, is measured by cmd/custodian/internal/cli's BenchmarkImplUpdateStatus).
func BenchmarkUpdateStatus(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			raw := manifestOf(b, n)
			b.SetBytes(int64(len(raw)))
			id := fmt.Sprintf("%d.%d", (n-1)/10+1, (n-1)%10+1) // the last task
			b.ReportAllocs()
			for b.Loop() {
				m, err := Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.UpdateStatus(StatusUpdate{ID: id, Status: InProgress, Branch: "impl/003/x"}, t0); err != nil {
					b.Fatal(err)
				}
				if _, err := Encode(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeEncode measures the codec alone: decode a manifest of n
// tasks as the script writes it (two-space indented, a member the script
// does not know on every task) and encode it again.
func BenchmarkDecodeEncode(b *testing.B) {
	for _, n := range []int{100} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			m, err := Decode(manifestOf(b, n))
			if err != nil {
				b.Fatal(err)
			}
			raw, err := Encode(m)
			if err != nil {
				b.Fatal(err)
			}
			raw = bytes.ReplaceAll(raw, []byte(`"updated_at":`), []byte(`"acceptance_criteria":[{"description":"401 on missing auth","verified":false}],"updated_at":`))
			var indented bytes.Buffer
			if err := json.Indent(&indented, raw, "", "  "); err != nil {
				b.Fatal(err)
			}
			raw = indented.Bytes()
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Encode(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
