package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/custodian-dev/custodian/reason"
)

// Metrics are the daemon's Prometheus metrics. The file store reports its
// group commits through ObserveSync (wire it to file.Options.OnSync).
type Metrics struct {
	reg          *prometheus.Registry
	commits      prometheus.Counter
	rejections   *prometheus.CounterVec
	commitSecs   prometheus.Histogram
	reads        prometheus.Histogram
	batch        prometheus.Histogram
	syncSecs     prometheus.Histogram
	journalBytes prometheus.Counter
	watchers     prometheus.Gauge
}

// NewMetrics registers the metrics (and the Go and process collectors) on
// reg.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	lat := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	m := &Metrics{
		reg: reg,
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "custodian_commits_total", Help: "Commits acknowledged (durable)."}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "custodian_rejections_total", Help: "Proposals rejected, by reason code."}, []string{"reason"}),
		commitSecs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "custodian_commit_duration_seconds", Help: "Time from a proposal's arrival to its durable commit.", Buckets: lat}),
		reads: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "custodian_read_duration_seconds", Help: "Time to serve a document read.", Buckets: lat}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "custodian_group_commit_batch_size", Help: "Commits made durable by one journal fsync.", Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}}),
		syncSecs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "custodian_journal_fsync_duration_seconds", Help: "Duration of journal fsyncs.", Buckets: lat}),
		journalBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "custodian_journal_bytes_total", Help: "Bytes appended to journals."}),
		watchers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "custodian_watchers", Help: "Open watch streams."}),
	}
	reg.MustRegister(m.commits, m.rejections, m.commitSecs, m.reads, m.batch, m.syncSecs, m.journalBytes, m.watchers,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveSync records one group commit: how many commits and journal bytes
// one fsync made durable, and how long it took.
func (m *Metrics) ObserveSync(commits int, bytes int64, took time.Duration) {
	m.batch.Observe(float64(commits))
	m.journalBytes.Add(float64(bytes))
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
		code := reason.CodeOf(err)
		if code == "" {
			code = "INTERNAL"
		}
		m.rejections.WithLabelValues(string(code)).Inc()
		return
	}
	if changed {
		m.commits.Inc()
		m.commitSecs.Observe(time.Since(start).Seconds())
	}
}
