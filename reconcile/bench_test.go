package reconcile

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testenv"
)

// benchProject writes n artifacts of size bytes, five per slice directory
// (the phase artifacts of seed 000), and returns the project root and the
// artifacts as a manifest records them.
func benchProject(b *testing.B, n, size int) (*os.Root, []Artifact) {
	b.Helper()
	dir := b.TempDir()
	names := []string{"intent", "requirements", "domain-model", "design", "tasks"}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, size)
	arts := make([]Artifact, 0, n)
	for i := range n {
		slice := fmt.Sprintf("SLICE-%05d", i/len(names))
		rel := fmt.Sprintf(".asdd/specs/%s/%s.md", slice, names[i%len(names)])
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if i%len(names) == 0 {
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		for j := range buf {
			buf[j] = byte('a' + rng.IntN(26))
		}
		if err := os.WriteFile(full, buf, 0o644); err != nil {
			b.Fatal(err)
		}
		arts = append(arts, Artifact{Slice: slice, Name: names[i%len(names)], Path: rel, Hash: FormatHash(sha256.Sum256(buf))})
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r, arts
}

func runCheck(b *testing.B, root *os.Root, arts []Artifact, opt Options) *Report {
	b.Helper()
	rep, err := Check(context.Background(), root, arts, opt)
	if err != nil {
		b.Fatal(err)
	}
	if !rep.Clean() {
		b.Fatalf("findings: %v", rep.Findings[:min(3, len(rep.Findings))])
	}
	return rep
}

// BenchmarkCheck10k compares a full check of 10,000 artifacts of 10 KB
// (every file read and hashed) with a warm one (stat cache: every file
// stat'ed, none read). Reproduce with
//
//	go test ./reconcile -run '^$' -bench Check10k -benchtime 20x
func BenchmarkCheck10k(b *testing.B) {
	root, arts := benchProject(b, 10_000, 10<<10)
	b.Run("cold-full", func(b *testing.B) {
		b.SetBytes(int64(len(arts)) * 10 << 10)
		defer testenv.CPUTime(b)()
		for b.Loop() {
			rep := runCheck(b, root, arts, Options{Full: true})
			if rep.Hashed != len(arts) {
				b.Fatalf("hashed %d", rep.Hashed)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		// Let the files settle past the racy window, then prime the cache.
		time.Sleep(DefaultRacyWindow + 100*time.Millisecond)
		runCheck(b, root, arts, Options{Full: true})
		b.SetBytes(int64(len(arts)) * 10 << 10)
		defer testenv.CPUTime(b)()
		for b.Loop() {
			rep := runCheck(b, root, arts, Options{})
			if rep.Cached != len(arts) {
				b.Fatalf("cached %d of %d", rep.Cached, len(arts))
			}
		}
	})
}
