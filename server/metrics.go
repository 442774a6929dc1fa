package server

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Metrics are the daemon's metrics, served at /metrics in Prometheus's
// text exposition format (version 0.0.4) with the Go runtime's and the
// process's. The file store reports its group commits through ObserveSync
// (wire it to file.Options.OnSync).
//
// They are written here rather than with a metrics library, measured
// (issue 17): Prometheus's client_golang builds a default registry with
// Go and process collectors at package initialisation, in every custodian
// process, and cost 14 % of the CPU of `custodian version` (median of 100
// alternated runs: 7.57 ms with it, 6.52 ms without); VictoriaMetrics/
// metrics reads the cgroup's pressure files at initialisation (15 system
// calls) and still cost 7 %. This file does nothing before a daemon asks
// for its metrics; Prometheus's own text parser reads what it serves
// (TestMetricsExposition).
type Metrics struct {
	commits      counter
	rejections   sync.Map // reason code -> *counter
	commitSecs   *histogram
	reads        *histogram
	batch        *histogram
	syncSecs     *histogram
	journalBytes counter
	watchers     gauge
	start        time.Time
}

// NewMetrics creates the daemon's metrics, all at zero.
func NewMetrics() *Metrics {
	lat := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	return &Metrics{
		commitSecs: newHistogram(lat),
		reads:      newHistogram(lat),
		batch:      newHistogram([]float64{1, 2, 4, 8, 16, 32, 64, 128, 256}),
		syncSecs:   newHistogram(lat),
		start:      time.Now(),
	}
}

// ObserveSync records one group commit: how many commits and journal bytes
// one fsync made durable, and how long it took.
func (m *Metrics) ObserveSync(commits int, bytes int64, took time.Duration) {
	m.batch.Observe(float64(commits))
	m.journalBytes.Add(uint64(max(bytes, 0)))
	m.syncSecs.Observe(took.Seconds())
}

func (s *Server) observeOp(start time.Time, changed bool, err error) {
	s.m.ObserveCommit(start, changed, err)
}

// ObserveCommit records one proposal that arrived at start: a rejection by
// its reason code when err is set, else a commit when changed (the daemon's
// own commits, such as the heartbeat monitor's, are counted through it).
func (m *Metrics) ObserveCommit(start time.Time, changed bool, err error) {
	if err != nil {
		code := string(reason.CodeOf(err))
		if code == "" {
			code = "INTERNAL"
		}
		c, ok := m.rejections.Load(code)
		if !ok {
			c, _ = m.rejections.LoadOrStore(code, new(counter))
		}
		c.(*counter).Inc()
		return
	}
	if changed {
		m.commits.Inc()
		m.commitSecs.Observe(time.Since(start).Seconds())
	}
}

// Handler serves the metrics: the daemon's, then the Go runtime's (go_*)
// and the process's (process_*).
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		b := bufio.NewWriter(w)
		m.write(b)
		_ = b.Flush()
	})
}

func (m *Metrics) write(w *bufio.Writer) {
	family(w, "custodian_commits_total", "counter", "Commits acknowledged (durable).")
	sample(w, "custodian_commits_total", "", float64(m.commits.Load()))
	family(w, "custodian_rejections_total", "counter", "Proposals rejected, by reason code.")
	var codes []string
	m.rejections.Range(func(k, _ any) bool { codes = append(codes, k.(string)); return true })
	slices.Sort(codes)
	for _, code := range codes {
		c, _ := m.rejections.Load(code)
		// A reason code is an upper-case identifier: nothing to escape.
		sample(w, "custodian_rejections_total", `reason="`+code+`"`, float64(c.(*counter).Load()))
	}
	m.commitSecs.write(w, "custodian_commit_duration_seconds", "Time from a proposal's arrival to its durable commit.")
	m.reads.write(w, "custodian_read_duration_seconds", "Time to serve a document read.")
	m.batch.write(w, "custodian_group_commit_batch_size", "Commits made durable by one journal fsync.")
	m.syncSecs.write(w, "custodian_journal_fsync_duration_seconds", "Duration of journal fsyncs.")
	family(w, "custodian_journal_bytes_total", "counter", "Bytes appended to journals.")
	sample(w, "custodian_journal_bytes_total", "", float64(m.journalBytes.Load()))
	family(w, "custodian_watchers", "gauge", "Open watch streams.")
	sample(w, "custodian_watchers", "", float64(m.watchers.Load()))
	writeRuntime(w, m.start)
}

// writeRuntime writes the Go runtime's and the process's metrics, under
// the names Prometheus's Go client gives them.
func writeRuntime(w *bufio.Writer, start time.Time) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	family(w, "go_info", "gauge", "Information about the Go environment.")
	sample(w, "go_info", `version="`+runtime.Version()+`"`, 1)
	gauges := []struct {
		name, help string
		v          float64
	}{
		{"go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())},
		{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc)},
		{"go_memstats_heap_objects", "Number of currently allocated objects.", float64(ms.HeapObjects)},
		{"go_memstats_sys_bytes", "Number of bytes obtained from system.", float64(ms.Sys)},
		{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", float64(ms.NextGC)},
	}
	for _, g := range gauges {
		family(w, g.name, "gauge", g.help)
		sample(w, g.name, "", g.v)
	}
	family(w, "go_gc_cycles_total", "counter", "Completed GC cycles.")
	sample(w, "go_gc_cycles_total", "", float64(ms.NumGC))
	family(w, "go_gc_pause_seconds_total", "counter", "Total time the garbage collector stopped the world.")
	sample(w, "go_gc_pause_seconds_total", "", float64(ms.PauseTotalNs)/1e9)

	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		family(w, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.")
		sample(w, "process_cpu_seconds_total", "", cpu.Seconds())
	}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		var size, rss uint64
		if _, err := fmt.Sscan(string(b), &size, &rss); err == nil {
			family(w, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
			sample(w, "process_resident_memory_bytes", "", float64(rss*uint64(os.Getpagesize())))
			family(w, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.")
			sample(w, "process_virtual_memory_bytes", "", float64(size*uint64(os.Getpagesize())))
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		family(w, "process_open_fds", "gauge", "Number of open file descriptors.")
		sample(w, "process_open_fds", "", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		family(w, "process_max_fds", "gauge", "Maximum number of open file descriptors.")
		sample(w, "process_max_fds", "", float64(lim.Cur))
	}
	family(w, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.")
	sample(w, "process_start_time_seconds", "", float64(start.UnixNano())/1e9)
}

func family(w *bufio.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func sample(w *bufio.Writer, name, labels string, v float64) {
	w.WriteString(name)
	if labels != "" {
		w.WriteString("{" + labels + "}")
	}
	w.WriteByte(' ')
	w.WriteString(formatValue(v))
	w.WriteByte('\n')
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

type counter struct{ atomic.Uint64 }

func (c *counter) Inc() { c.Add(1) }

type gauge struct{ atomic.Int64 }

func (g *gauge) Inc() { g.Add(1) }
func (g *gauge) Dec() { g.Add(-1) }

// histogram counts observations into fixed buckets (upper bounds,
// ascending) and sums them; it is written with Prometheus's cumulative le
// buckets.
type histogram struct {
	bounds []float64
	counts []atomic.Uint64 // one per bound, then +Inf
	sum    atomic.Uint64   // float64 bits
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe records v.
func (h *histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func (h *histogram) write(w *bufio.Writer, name, help string) {
	family(w, name, "histogram", help)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		sample(w, name+"_bucket", `le="`+formatValue(b)+`"`, float64(cum))
	}
	cum += h.counts[len(h.bounds)].Load()
	sample(w, name+"_bucket", `le="+Inf"`, float64(cum))
	sample(w, name+"_sum", "", math.Float64frombits(h.sum.Load()))
	sample(w, name+"_count", "", float64(cum))
}
