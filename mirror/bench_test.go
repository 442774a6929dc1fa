package mirror

import (
	"errors"
	"fmt"
	"testing"

	"github.com/custodian-dev/custodian/store"
)

// BenchmarkWrite is one mirror write (two files staged and fsynced, two
// renames, one directory fsync), of one document or of 8 at once (WriteBatch).
//
//	go test -run XXX -bench Write ./mirror
func BenchmarkWrite(b *testing.B) {
	for _, docs := range []int{1, 8} {
		b.Run(fmt.Sprintf("docs=%d", docs), func(b *testing.B) {
			m := open(b, b.TempDir(), nil)
			rev := uint64(0)
			for b.Loop() {
				rev++
				batch := make([]store.Document, docs)
				for i := range batch {
					batch[i] = doc(fmt.Sprintf(".workflow/.cycle/c%d.json", i), rev, "x")
				}
				if _, errs := m.WriteBatch(batch); errors.Join(errs...) != nil {
					b.Fatal(errors.Join(errs...))
				}
			}
		})
	}
}
