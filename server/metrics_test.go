package server_test

import (
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
)

// /metrics is Prometheus's text format as Prometheus's own parser reads it:
// the daemon's counters, histograms with cumulative le buckets, rejections
// by reason code, and the Go runtime's and the process's metrics.
func TestMetricsExposition(t *testing.T) {
	// Before anything happened (no rejection yet): parsed all the same.
	fresh := httptest.NewRecorder()
	server.NewMetrics().Handler().ServeHTTP(fresh, httptest.NewRequest("GET", "/metrics", nil))
	fp := expfmt.NewTextParser(model.LegacyValidation)
	if _, err := fp.TextToMetricFamilies(fresh.Body); err != nil {
		t.Fatalf("Prometheus's parser refuses a fresh exposition: %v", err)
	}

	m := server.NewMetrics()
	start := time.Now().Add(-3 * time.Millisecond)
	m.ObserveCommit(start, true, nil)
	m.ObserveCommit(start, true, nil)
	m.ObserveCommit(start, false, nil) // no change: not a commit
	m.ObserveCommit(start, false, reason.New(reason.BelowThreshold, "too low"))
	m.ObserveCommit(start, false, errors.New("disk on fire"))
	m.ObserveSync(3, 600, 2*time.Millisecond)
	m.ObserveSync(1, 200, 200*time.Microsecond)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("Prometheus's parser refuses the exposition: %v", err)
	}
	one := func(name string, typ dto.MetricType) *dto.MetricFamily {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no %s", name)
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
		return f
	}
	if v := one("custodian_commits_total", dto.MetricType_COUNTER).Metric[0].GetCounter().GetValue(); v != 2 {
		t.Errorf("commits %v, want 2", v)
	}
	if v := one("custodian_journal_bytes_total", dto.MetricType_COUNTER).Metric[0].GetCounter().GetValue(); v != 800 {
		t.Errorf("journal bytes %v, want 800", v)
	}
	rej := map[string]float64{}
	for _, mt := range one("custodian_rejections_total", dto.MetricType_COUNTER).Metric {
		for _, l := range mt.Label {
			if l.GetName() == "reason" {
				rej[l.GetValue()] = mt.GetCounter().GetValue()
			}
		}
	}
	if rej[string(reason.BelowThreshold)] != 1 || rej["INTERNAL"] != 1 || len(rej) != 2 {
		t.Errorf("rejections by reason %v", rej)
	}
	h := one("custodian_group_commit_batch_size", dto.MetricType_HISTOGRAM).Metric[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 4 {
		t.Errorf("batch histogram: count %d sum %v, want 2 and 4", h.GetSampleCount(), h.GetSampleSum())
	}
	cum := map[float64]uint64{}
	for _, b := range h.Bucket {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	if cum[1] != 1 || cum[2] != 1 || cum[4] != 2 || cum[256] != 2 {
		t.Errorf("batch buckets (cumulative) %v", cum)
	}
	if c := one("custodian_commit_duration_seconds", dto.MetricType_HISTOGRAM).Metric[0].GetHistogram().GetSampleCount(); c != 2 {
		t.Errorf("commit durations: %d samples, want 2", c)
	}
	one("custodian_journal_fsync_duration_seconds", dto.MetricType_HISTOGRAM)
	one("custodian_read_duration_seconds", dto.MetricType_HISTOGRAM)
	one("custodian_watchers", dto.MetricType_GAUGE)
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

// Observations from many goroutines at once are all counted (-race).
func TestMetricsConcurrent(t *testing.T) {
	m := server.NewMetrics()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if i%10 == g%10 {
					m.ObserveCommit(time.Now(), false, reason.New(reason.Conflict, "x"))
					continue
				}
				m.ObserveCommit(time.Now(), true, nil)
				m.ObserveSync(1, 10, time.Microsecond)
			}
		})
	}
	wg.Wait()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v := fams["custodian_commits_total"].Metric[0].GetCounter().GetValue(); v != 7200 {
		t.Errorf("commits %v, want 7200", v)
	}
	if v := fams["custodian_rejections_total"].Metric[0].GetCounter().GetValue(); v != 800 {
		t.Errorf("rejections %v, want 800", v)
	}
	h := fams["custodian_group_commit_batch_size"].Metric[0].GetHistogram()
	if h.GetSampleCount() != 7200 || h.GetSampleSum() != 7200 || h.Bucket[0].GetCumulativeCount() != 7200 {
		t.Errorf("batch histogram count %d sum %v first bucket %d, want 7200", h.GetSampleCount(), h.GetSampleSum(), h.Bucket[0].GetCumulativeCount())
	}
	if v := fams["custodian_journal_bytes_total"].Metric[0].GetCounter().GetValue(); v != 72000 {
		t.Errorf("journal bytes %v, want 72000", v)
	}
}
