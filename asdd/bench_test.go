package asdd

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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

// benchManifest builds a manifest of n slices as bench.Manifest does (a
// mix of phases, confidence chains, artifact hashes; tasksPer tasks each),
// read back as the daemon reads it and finalized once by Apply, as the
// daemon's latest manifest is.
func benchManifest(b *testing.B, n, tasksPer int) *Manifest {
	m := New()
	m.ProjectContext.CurrentSprint = "BENCH"
	for i := range n {
		id := fmt.Sprintf("SLICE-%05d", i)
		s := &Slice{
			SliceID: id, Name: "bench slice " + strconv.Itoa(i), Type: "FEATURE",
			Status: Lifecycle[i%(len(Lifecycle)-1)], GovernanceMode: "MANUAL",
			PhaseData: map[string]string{
				"intent":       ".asdd/specs/" + id + "/intent.md",
				"requirements": ".asdd/specs/" + id + "/requirements.md",
			},
			ConfidenceChain: []ChainEntry{
				{Agent: "discovery", Score: 0.97, Timestamp: "2026-11-01T00:00:00Z"},
				{Agent: "spec", Score: 0.96, Timestamp: "2026-11-01T00:10:00Z"},
			},
			ArtifactHashes: map[string]string{
				".asdd/specs/" + id + "/intent.md":       "sha256:" + strings.Repeat("a", 64),
				".asdd/specs/" + id + "/requirements.md": "sha256:" + strings.Repeat("b", 64),
			},
			CreatedAt: "2026-11-01T00:00:00Z", UpdatedAt: "2026-11-01T00:10:00Z",
		}
		for t := range tasksPer {
			s.Tasks = append(s.Tasks, Task{ID: fmt.Sprintf("T%03d", t), Title: "task " + strconv.Itoa(t), Wave: 1 + t/10, Status: "pending"})
		}
		m.Slices = append(m.Slices, s)
	}
	raw, err := Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	if m, err = Decode(raw); err != nil {
		b.Fatal(err)
	}
	out, err := Apply(m, Beat{Agent: "spec", Status: HeartbeatActive}, DefaultConfig(), fixedNow)
	if err != nil {
		b.Fatal(err)
	}
	return out.Manifest
}

// BenchmarkNextHeartbeat measures what the daemon does per heartbeat
// besides the store: ApplyFinalized(Beat) on its latest manifest, then
// Encoded.Next (changed parts encoded and validated, the patch; the
// document's bytes are not made). Agents take turns, as in the daemon
// benchmark. Its cost should barely grow with the number of slices.
// apply-ns/op is the part spent in ApplyFinalized.
func BenchmarkNextHeartbeat(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			e, err := NewEncoded(benchManifest(b, n, 0))
			if err != nil {
				b.Fatal(err)
			}
			docBytes := e.Len()
			now := fixedNow
			var applyTime time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				done := i
				op := Beat{Agent: cfg.Agents[i%len(cfg.Agents)].Name, Status: HeartbeatActive, Completed: &done}
				start := time.Now()
				out, err := ApplyFinalized(e.Manifest, op, cfg, now.Add(time.Duration(i)*time.Second))
				applyTime += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				ne, patch, err := e.Next(out.Manifest)
				if err != nil || patch == nil {
					b.Fatalf("Next: patch %s, %v", patch, err)
				}
				e = ne
			}
			b.ReportMetric(float64(applyTime.Nanoseconds())/float64(b.N), "apply-ns/op")
			b.ReportMetric(float64(docBytes), "doc-bytes")
		})
	}
}

// BenchmarkApplyFinalizedLock measures ApplyFinalized of an operation that
// names and changes a slice (a lease renewed on the last slice): the slice
// is found through the aggregate's index, but the slice list is copied
// (one pointer per slice), so unlike a heartbeat its cost grows a little
// with the number of slices.
func BenchmarkApplyFinalizedLock(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			m := benchManifest(b, n, 0)
			id := m.Slices[n-1].SliceID
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				out, err := ApplyFinalized(m, LockSlice{Slice: id, Holder: "spec", TTL: time.Hour}, cfg, fixedNow.Add(time.Duration(i)*time.Second))
				if err != nil {
					b.Fatal(err)
				}
				m = out.Manifest
			}
		})
	}
}
