package asdd

import (
	"encoding/json"
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

// BenchmarkDecode measures reading a manifest of 200 slices (schema check
// and decode), as every command does.
func BenchmarkDecode(b *testing.B) {
	cfg := DefaultConfig()
	m := New()
	for i := range 200 {
		id := fmt.Sprintf("S%03d", i)
		out, err := Apply(m, AddSlice{ID: id}, cfg, fixedNow)
		if err != nil {
			b.Fatal(err)
		}
		out, err = Apply(out.Manifest, prop("discovery", id, 0.9, art("intent", "s/"+id+"/intent.md")), cfg, fixedNow)
		if err != nil {
			b.Fatal(err)
		}
		m = out.Manifest
	}
	raw, err := Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBaseline is encoding/json into a generic tree, for scale.
func BenchmarkDecodeBaseline(b *testing.B) {
	m := New()
	for i := range 200 {
		out, _ := Apply(m, AddSlice{ID: fmt.Sprintf("S%03d", i)}, DefaultConfig(), fixedNow)
		m = out.Manifest
	}
	raw, _ := Encode(m)
	b.SetBytes(int64(len(raw)))
	for i := 0; i < b.N; i++ {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal measures Marshal of a 1,000-slice manifest (what a
// commit by model hands the store), against encoding/json's Marshal of the
// same value for scale.
func BenchmarkMarshal(b *testing.B) {
	m := New()
	for i := range 1000 {
		id := fmt.Sprintf("SLICE-%05d", i)
		s := &Slice{SliceID: id, Name: fmt.Sprint("slice ", i), Type: "FEATURE", Status: Lifecycle[i%(len(Lifecycle)-1)], GovernanceMode: "MANUAL",
			PhaseData:       map[string]string{"intent": ".asdd/specs/" + id + "/intent.md"},
			ConfidenceChain: []ChainEntry{{Agent: "discovery", Score: 0.97, Timestamp: "2026-11-01T00:00:00Z"}},
			ArtifactHashes:  map[string]string{".asdd/specs/" + id + "/intent.md": "sha256:0123456789abcdef"},
			CreatedAt:       "2026-11-01T00:00:00Z", UpdatedAt: "2026-11-01T00:10:00Z"}
		for t := range 3 {
			s.Tasks = append(s.Tasks, Task{ID: fmt.Sprintf("T%03d", t), Title: fmt.Sprint("task ", t), Wave: 1, Status: "pending"})
		}
		m.Slices = append(m.Slices, s)
	}
	for _, c := range []struct {
		name string
		f    func(any) ([]byte, error)
	}{{"asdd", Marshal}, {"encoding-json", json.Marshal}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.f(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
