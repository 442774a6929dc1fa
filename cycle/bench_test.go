package cycle

import (
	"fmt"
	"testing"
)

// BenchmarkChange measures what one `cycle change` costs the domain on a
// change log of n entries: decode the stored document, validate it, apply
// the append (with its history checks), encode the result.
func BenchmarkChange(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			s, err := New(testID, "bench", "", 5, t0)
			if err != nil {
				b.Fatal(err)
			}
			if s, _, err = Apply(s, Iterate{}, t0); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if s, _, err = Apply(s, AppendChange{File: fmt.Sprintf("src/f%d.ts", i), Action: "create", Agent: "cd", Description: "change"}, t0); err != nil {
					b.Fatal(err)
				}
			}
			raw, err := Encode(s)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			b.ResetTimer()
			for b.Loop() {
				cur, err := Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				if err := Validate(cur); err != nil {
					b.Fatal(err)
				}
				next, _, err := Apply(cur, AppendChange{File: "src/new.ts", Action: "modify", Agent: "cd"}, t0)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Encode(next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
