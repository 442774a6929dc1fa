package impl

import (
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
// journal and snapshot, is measured by internal/cli's BenchmarkImplUpdateStatus).
func BenchmarkUpdateStatus(b *testing.B) {
	for _, n := range []int{10, 1000} {
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
