package asdd

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkApplyBeat measures one rule application plus the encoding and
// schema check of the result (what every commit pays besides the store),
// on manifests of 10, 50 and 200 slices.
func BenchmarkApplyBeat(b *testing.B) {
	for _, n := range []int{10, 50, 200} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			m := New()
			now := fixedNow
			for i := range n {
				out, err := Apply(m, AddSlice{ID: fmt.Sprintf("S%03d", i)}, cfg, now)
				if err != nil {
					b.Fatal(err)
				}
				m = out.Manifest
				out, err = Apply(m, prop("discovery", fmt.Sprintf("S%03d", i), 0.97, art("intent", fmt.Sprintf("s/%d/intent.md", i))), cfg, now)
				if err != nil {
					b.Fatal(err)
				}
				m = out.Manifest
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := Apply(m, Beat{Agent: "spec", Slice: "S001"}, cfg, now.Add(time.Duration(i)*time.Second))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Encode(out.Manifest); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
