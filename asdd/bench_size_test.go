package asdd_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
)

var benchNow = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

// sizedManifest is bench.Finalized's manifest of n slices.
func sizedManifest(b *testing.B, n int) *asdd.Manifest {
	m, err := bench.Finalized(n, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkApplyFinalizedLock measures ApplyFinalized of an operation that
// names and changes a slice (a lease renewed on the last slice): the slice
// is found through the aggregate's index; the slice list (its pointers)
// is copied once per operation.
func BenchmarkApplyFinalizedLock(b *testing.B) {
	for _, n := range []int{1000, 10000, 40000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			cfg := asdd.DefaultConfig()
			m := sizedManifest(b, n)
			id := m.Slices[n-1].SliceID
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				out, err := asdd.ApplyFinalized(m, asdd.LockSlice{Slice: id, Holder: "spec", TTL: time.Hour}, cfg, benchNow.Add(time.Duration(i)*time.Second))
				if err != nil {
					b.Fatal(err)
				}
				m = out.Manifest
			}
		})
	}
}

// BenchmarkReadManifest measures what a CLI process does to read the
// manifest before any rule runs: Validate (the schema, slice by slice) and
// Decode (which validates, then decodes), on bench.Manifest's manifests.
func BenchmarkReadManifest(b *testing.B) {
	for _, n := range []int{10, 1000} {
		raw, err := bench.Manifest(n, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("validate/slices=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if err := asdd.Validate(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("decode/slices=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := asdd.Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
