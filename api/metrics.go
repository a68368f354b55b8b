package api

import (
	"context"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	asynqmetrics "github.com/hibiken/asynq/x/metrics"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/benchq/benchq/internal/job"
)

// collectTimeout bounds the Redis reads a scrape triggers.
const collectTimeout = 2 * time.Second

// metrics owns the server's own Prometheus registry (no global registry:
// two servers in one test process must not collide).
type metrics struct {
	registry *prometheus.Registry
	duration *prometheus.HistogramVec
	// hookRejected counts CI deliveries refused before anything ran.
	hookRejected *prometheus.CounterVec
}

func newMetrics(st JobStore, insp *asynq.Inspector) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "benchq_http_request_duration_seconds",
			Help:    "Duration of API requests by method, route and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
		hookRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "benchq_hook_rejected_total",
			Help: "CI webhook deliveries refused, by provider and reason (signature: no secret of a template of the repository named verifies; body: over the size limit; delivery: a GitHub delivery without its id).",
		}, []string{"provider", "reason"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.duration,
		m.hookRejected,
		&jobsCollector{store: st, desc: prometheus.NewDesc("benchq_jobs",
			"Jobs stored, by status.", []string{"status"}, nil)},
	)
	if insp != nil {
		m.registry.MustRegister(asynqmetrics.NewQueueMetricsCollector(insp))
	}
	return m
}

// middleware observes every request under its route pattern, never its raw
// path, so ids and probing scanners cannot explode the label set.
func (m *metrics) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // write the problem now so its status is observed
		}
		route := c.Path()
		if route == "" || c.Response().Status == 404 && route == "/*" {
			route = "unmatched"
		}
		m.duration.WithLabelValues(c.Request().Method, route,
			strconv.Itoa(c.Response().Status)).Observe(time.Since(start).Seconds())
		return nil
	}
}

// jobsCollector reports job counts by status at scrape time.
type jobsCollector struct {
	store JobStore
	desc  *prometheus.Desc
}

func (jc *jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jc.desc }

func (jc *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	counts, err := jc.store.CountByStatus(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jc.desc, err)
		return
	}
	for _, s := range []job.Status{job.StatusQueued, job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCanceled} {
		ch <- prometheus.MustNewConstMetric(jc.desc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

func (m *metrics) handler() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
}
