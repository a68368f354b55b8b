package dashboard

import (
	"net/http"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
)

type trendsData struct {
	base
	Query     client.TrendQuery
	Templates []client.TemplateSummary
	// Metrics are the ones the page offers first (metric.TrendOffered);
	// any metric can be asked for in the URL.
	Metrics  []string
	Trend    *client.Trend
	ChartURL string
}

// trendsPage draws a metric's series across a template's finished jobs,
// the history a trend threshold judges a job against.
func (h *Handler) trendsPage(w http.ResponseWriter, r *http.Request) {
	tq := trendQuery(r)
	if tq.Metric == "" {
		tq.Metric = "p99_ms"
	}
	c := h.apiClient(r)
	templates, err := c.Templates(r.Context())
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	if tq.Template == "" && len(templates) > 0 {
		tq.Template = templates[0].Name
	}
	d := trendsData{base: h.base(r, "Trends", "trends"), Query: tq, Templates: templates, Metrics: metric.TrendOffered()}
	if tq.Template != "" {
		t, err := c.Trend(r.Context(), tq)
		if err != nil {
			h.apiError(w, r, err)
			return
		}
		d.Trend = &t
		d.ChartURL = Prefix + "/trends/chart.svg?" + tq.Values().Encode()
	}
	h.render(w, r, http.StatusOK, "trends", d)
}

// trendChart is the trend's SVG, drawn by the API.
func (h *Handler) trendChart(w http.ResponseWriter, r *http.Request) {
	v := trendQuery(r).Values()
	v.Set("format", "svg")
	h.proxy(w, r, "/v1/trends?"+v.Encode())
}

// trendQuery reads a trend's selection from the page's query string.
func trendQuery(r *http.Request) client.TrendQuery {
	q := r.URL.Query()
	// The page always shows the series' change points, and the chart
	// marks them.
	return client.TrendQuery{Template: q.Get("template"), Metric: q.Get("metric"), Target: q.Get("target"), Branch: q.Get("branch"), ChangePoints: true}
}

// changePointLabel names a change point's cell as the job page names
// points.
func changePointLabel(cp job.ChangePoint) string {
	return pointLabel(job.Point{Target: cp.Target, Concurrency: cp.Concurrency, Requests: cp.Requests, Duration: cp.Duration, Rate: cp.Rate})
}

// trendPointLabel names a trend point's cell as the job page names points.
func trendPointLabel(p analysis.TrendPoint) string {
	return pointLabel(job.Point{Target: p.Target, Concurrency: p.Concurrency, Requests: p.Requests, Duration: p.Duration, Rate: p.Rate})
}
