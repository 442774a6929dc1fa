package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// Result is one measured configuration.
type Result struct {
	Name      string        `json:"name"`
	Writers   int           `json:"writers"`
	DocBytes  int           `json:"doc_bytes"`
	Ops       int           `json:"ops"`
	PerSecond float64       `json:"per_second"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	// Baseline names the bare-cost result this one is compared to, and
	// Ratio is PerSecond divided by the baseline's.
	Baseline string  `json:"baseline,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	// VsHTTP is PerSecond divided by the bare HTTP round trip's with as
	// many clients (daemon results only).
	VsHTTP float64 `json:"vs_http,omitempty"`
}

// Stats turns latencies measured over elapsed into a Result.
func Stats(name string, writers, size int, lat []time.Duration, elapsed time.Duration) Result {
	slices.Sort(lat)
	r := Result{Name: name, Writers: writers, DocBytes: size, Ops: len(lat)}
	if len(lat) == 0 || elapsed <= 0 {
		return r
	}
	r.PerSecond = float64(len(lat)) / elapsed.Seconds()
	r.P50 = lat[len(lat)*50/100]
	r.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
	return r
}

// Run calls op from writers goroutines until budget has passed (and at
// least minOps operations completed), and returns the latencies.
func Run(writers int, budget time.Duration, minOps int, op func(w, i int) error) ([]time.Duration, time.Duration, error) {
	var (
		mu    sync.Mutex
		lat   []time.Duration
		count atomic.Int64
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(budget)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; ; i++ {
				if time.Now().After(deadline) && count.Load() >= int64(minOps) {
					break
				}
				t0 := time.Now()
				if err := op(w, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					break
				}
				mine = append(mine, time.Since(t0))
				count.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lat, time.Since(start), first
}

// BareAppend measures append+fsync of records of recBytes to one file.
func BareAppend(dir string, recBytes int, budget time.Duration) (Result, error) {
	f, err := os.OpenFile(filepath.Join(dir, "bare.ndjson"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	rec := []byte(strings.Repeat("x", recBytes-1) + "\n")
	lat, el, err := Run(1, budget, 20, func(int, int) error {
		if _, err := f.Write(rec); err != nil {
			return err
		}
		return f.Sync()
	})
	return Stats(fmt.Sprintf("bare append+fsync %dB", recBytes), 1, recBytes, lat, el), err
}

// BareReplace measures temp file + fsync + rename + directory fsync of a
// file of size bytes.
func BareReplace(dir string, size int, budget time.Duration) (Result, error) {
	data := []byte(strings.Repeat("y", size))
	target := filepath.Join(dir, "bare.json")
	lat, el, err := Run(1, budget, 10, func(int, int) error {
		tmp := target + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp, target); err != nil {
			return err
		}
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	})
	return Stats(fmt.Sprintf("bare temp+fsync+rename+dirsync %s", human(size)), 1, size, lat, el), err
}

func human(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// Document returns a JSON object of about size bytes with writers' own
// fields, so that concurrent writers touch distinct fields.
func Document(size int) []byte {
	m := map[string]any{}
	pad := strings.Repeat("p", 80)
	for i := 0; ; i++ {
		m[fmt.Sprintf("filler-%06d", i)] = pad
		if (i+1)*100 >= size {
			break
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// StoreCommits measures Update through the file store with writers
// goroutines on a document of about size bytes. Each commit changes one
// field (what a proposal does), so the journal record stays small.
func StoreCommits(dir string, writers, size int, budget time.Duration) (Result, error) {
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		return Result{}, err
	}
	defer s.Close()
	ctx := context.Background()
	key := "bench/doc.json"
	base := Document(size)
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: base, Actor: "bench", Reason: "seed"}, nil
	}, store.Create()); err != nil {
		return Result{}, err
	}
	lat, el, err := Run(writers, budget, 2*writers, func(w, i int) error {
		_, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
			// Splice the writer's field in without decoding the whole
			// document, as a domain with its own types would.
			field := fmt.Sprintf(`"w%02d":%d,`, w, i)
			v := cur.Value
			if old := indexField(v, fmt.Sprintf(`"w%02d"`, w)); old >= 0 {
				v = removeField(v, old)
			}
			next := make([]byte, 0, len(v)+len(field))
			next = append(next, '{')
			next = append(next, field...)
			next = append(next, strings.TrimLeft(string(v), " \n{")...)
			return store.Change{Value: next, Actor: fmt.Sprintf("w%02d", w), Reason: "bench"}, nil
		})
		return err
	})
	return Stats(fmt.Sprintf("file store commit, %d writer(s), %s doc", writers, human(size)), writers, size, lat, el), err
}

func indexField(v []byte, name string) int { return strings.Index(string(v), name) }

// removeField cuts `"wNN": <number>,` (as written by StoreCommits, possibly
// re-indented by the snapshot) starting at off.
func removeField(v []byte, off int) []byte {
	end := strings.IndexByte(string(v[off:]), ',')
	if end < 0 {
		return v
	}
	out := append([]byte{}, v[:off]...)
	return append(out, v[off+end+1:]...)
}
