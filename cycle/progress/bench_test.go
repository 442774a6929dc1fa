package progress

import (
	"fmt"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cycle"
)

// BenchmarkRender measures rendering every progress file of a cycle whose
// change log has n entries (what each commit's sync computes before it
// compares and writes).
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			s := sample(b)
			for i := range n {
				var err error
				if s, _, err = cycle.Apply(s, cycle.AppendChange{File: fmt.Sprintf("src/f%d.ts", i), Action: "create", Agent: "cd"}, t0.Add(time.Hour)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := Render(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
