package file_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// BenchmarkCommit measures durable commits through the file store; compare
// with BenchmarkBareReplace of the same size, measured in the same run.
func BenchmarkCommit(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("size=%d/writers=%d", size, writers), func(b *testing.B) {
				r, err := bench.StoreCommits(b.TempDir(), writers, size, time.Duration(b.N)*time.Millisecond)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.PerSecond, "commits/s")
				b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
			})
		}
	}
}

func BenchmarkBareReplace(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			r, err := bench.BareReplace(b.TempDir(), size, time.Duration(b.N)*time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.PerSecond, "ops/s")
		})
	}
}

// BenchmarkOpenHistory measures opening a document (the first Get of a
// process: recovery reads) with a long history: a journal of
// $CUSTODIAN_BENCH_HISTORY_MB MiB (16 by default) of 400-byte records,
// kept in one live journal ("single", as before rotation existed) or
// sealed into 64 MiB segments ("segmented", as the store leaves it).
func BenchmarkOpenHistory(b *testing.B) {
	mb := int64(16)
	if v := os.Getenv("CUSTODIAN_BENCH_HISTORY_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		mb = n
	}
	for _, layout := range []struct {
		name string
		seg  int64
	}{{"single", 0}, {"segmented", 64 << 20}} {
		b.Run(fmt.Sprintf("%s/%dMiB", layout.name, mb), func(b *testing.B) {
			dir := b.TempDir()
			recs, err := writeHistory(dir, mb<<20, layout.seg)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				s, err := file.Open(dir, file.Options{})
				if err != nil {
					b.Fatal(err)
				}
				doc, err := s.Get(context.Background(), "doc.json")
				if err != nil {
					b.Fatal(err)
				}
				if doc.Revision != recs {
					b.Fatalf("revision %d, want %d", doc.Revision, recs)
				}
				s.Close()
			}
			b.ReportMetric(float64(recs), "records")
		})
	}
}

// BenchmarkGetAtHistory reads the value of a revision near the end of a
// long history (get --at, diff): the journal replayed from revision 1, a
// file at a time. B/op is the memory it allocates; with 8 MiB segments the
// records of only one file are held at once.
func BenchmarkGetAtHistory(b *testing.B) {
	const mb = 16
	dir := b.TempDir()
	recs, err := writeHistory(dir, mb<<20, 8<<20)
	if err != nil {
		b.Fatal(err)
	}
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		doc, err := s.GetAt(context.Background(), "doc.json", recs-1)
		if err != nil {
			b.Fatal(err)
		}
		if doc.Revision != recs-1 {
			b.Fatalf("revision %d, want %d", doc.Revision, recs-1)
		}
	}
	b.ReportMetric(float64(recs), "records")
}

// writeHistory writes the files of document doc.json with a journal of
// about size bytes: each record sets /n and an 80-byte /note; the snapshot
// holds the last value. With seg > 0 the journal is cut into segments of
// seg bytes named as the store names them, the rest left live. It returns
// the number of records.
func writeHistory(dir string, size, seg int64) (uint64, error) {
	var (
		out     *bufio.Writer
		f       *os.File
		first   uint64 = 1
		written int64
		total   int64
		prev    string
		value   []byte
	)
	open := func() error {
		var err error
		f, err = os.Create(filepath.Join(dir, "doc.journal.ndjson"))
		out = bufio.NewWriterSize(f, 1<<20)
		written = 0
		return err
	}
	closeFile := func() error {
		if err := out.Flush(); err != nil {
			return err
		}
		return f.Close()
	}
	if err := open(); err != nil {
		return 0, err
	}
	rev := uint64(0)
	for total < size {
		rev++
		note := strings.Repeat(string(rune('a'+rev%26)), 80)
		var patch string
		if rev == 1 {
			patch = fmt.Sprintf(`[{"op":"add","path":"","value":{"n":1,"note":%q}}]`, note)
		} else {
			patch = fmt.Sprintf(`[{"op":"replace","path":"/n","value":%d},{"op":"replace","path":"/note","value":%q}]`, rev, note)
		}
		value = fmt.Appendf(value[:0], `{"n":%d,"note":%q}`, rev, note)
		sum, err := store.SumOf(value)
		if err != nil {
			return 0, err
		}
		r := store.Record{Rev: rev, Time: time.Unix(1_800_000_000, int64(rev)), Actor: "bench", Reason: "history", Patch: json.RawMessage(patch), Sum: sum}
		line, err := r.Seal(prev)
		if err != nil {
			return 0, err
		}
		prev = r.Hash
		out.Write(line)
		written += int64(len(line))
		total += int64(len(line))
		if seg > 0 && written >= seg && total < size {
			if err := closeFile(); err != nil {
				return 0, err
			}
			name := fmt.Sprintf("doc.journal.%012d-%012d.ndjson", first, rev)
			if err := os.Rename(filepath.Join(dir, "doc.journal.ndjson"), filepath.Join(dir, name)); err != nil {
				return 0, err
			}
			first = rev + 1
			if err := open(); err != nil {
				return 0, err
			}
		}
	}
	if err := closeFile(); err != nil {
		return 0, err
	}
	snap, err := store.Indent(value)
	if err != nil {
		return 0, err
	}
	return rev, os.WriteFile(filepath.Join(dir, "doc.json"), snap, 0o644)
}

// BenchmarkHoldCommit measures the daemon's commit path (Hold mode, group
// commit, commits through a patch as the ASDD operations make them) with
// 64 writers, without rotation and with the journal sealed every 256 KiB
// (about every thousand commits).
func BenchmarkHoldCommit(b *testing.B) {
	for _, seg := range []int64{-1, 256 << 10} {
		name := "rotating=never"
		if seg > 0 {
			name = fmt.Sprintf("rotating=%dKiB", seg>>10)
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			s, err := file.Open(dir, file.Options{Hold: true, SegmentBytes: seg})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			const writers = 64
			if _, err := s.Update(ctx, "doc.json", func(store.Document) (store.Change, error) {
				return store.Change{Value: []byte(`{}`), Actor: "bench"}, nil
			}, store.Create()); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			lat := make([][]time.Duration, writers)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					note := strings.Repeat("n", 200)
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						t0 := time.Now()
						// A patch, as generic writers give it.
						k := fmt.Sprintf("w%02d", w)
						p := fmt.Sprintf(`[{"op":"add","path":"/%s","value":{"i":%d,"note":"%s"}}]`, k, i, note)
						_, err := s.Update(ctx, "doc.json", func(cur store.Document) (store.Change, error) {
							return store.Change{Patch: json.RawMessage(p), Actor: k, Reason: "bench"}, nil
						})
						if err != nil {
							b.Error(err)
							return
						}
						lat[w] = append(lat[w], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "commits/s")
			segs, _ := filepath.Glob(filepath.Join(dir, "doc.journal.*-*.ndjson"))
			b.ReportMetric(float64(len(segs)), "segments")
		})
	}
}
