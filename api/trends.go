package api

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/metric"
	"github.com/benchq/benchq/internal/report"
	"github.com/benchq/benchq/internal/template"
)

// Trend series sizes.
const (
	defaultTrendLimit = 50
	maxTrendLimit     = 200
)

// TrendResponse is a metric's series across a template's finished jobs.
type TrendResponse struct {
	Template string `json:"template" example:"checkout-main"`
	// Metric is the metric's full name: asked for as p99, it answers
	// p99_ms.
	Metric string `json:"metric" example:"p99_ms" enums:"rps,good_rps,time_per_request_ms,time_per_request_all_ms,transfer_rate_kbps,mean_ms,min_ms,max_ms,p50_ms,p66_ms,p75_ms,p80_ms,p90_ms,p95_ms,p98_ms,p99_ms,p99.9_ms,p99.99_ms,p100_ms,complete,failed,failed_ratio,non_2xx,non_2xx_ratio,error_ratio"`
	Target string `json:"target,omitempty"`
	Branch string `json:"branch,omitempty" example:"main"`
	// Points are oldest first: per job, one per cell (target,
	// concurrency, requests/duration/rate) where the metric was measured.
	Points []analysis.TrendPoint `json:"points"`
}

// handleGetTrend serves a metric's series across a template's jobs.
//
//	@Summary		Trend of a metric across a template's jobs
//	@Description	The caller's last `limit` succeeded jobs created from the template (label template=NAME), of one branch when given, oldest first: per job and cell the mean of the metric over its repeats, with the job id, creation time, verdict and commit label. metric is a threshold metric (rps, p50_ms, p99_ms, mean_ms, ...; p99 and mean stand for p99_ms and mean_ms); target a target name or URL. format=svg answers the chart as SVG.
//	@Tags			trends
//	@Produce		json
//	@Produce		image/svg+xml
//	@Param			template	query		string	true	"template name"
//	@Param			metric		query		string	true	"threshold metric"	example(p99_ms)
//	@Param			target		query		string	false	"target name or URL; every target when left out"
//	@Param			branch		query		string	false	"only jobs labelled with this branch"
//	@Param			limit		query		int		false	"jobs, newest first (default 50, at most 200)"
//	@Param			format		query		string	false	"json (default) or svg"
//	@Param			owner		query		string	false	"an admin's: the key id whose jobs to read"
//	@Success		200			{object}	TrendResponse
//	@Failure		400			{object}	Problem	"bad-query, naming the parameter"
//	@Failure		401			{object}	Problem	"no valid API key"
//	@Failure		503			{object}	Problem	"store-unavailable: Redis unreachable; retry after the Retry-After header"
//	@Header			503			{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/trends [get]
func (s *Server) handleGetTrend(c echo.Context) error {
	q := c.QueryParams()
	name := q.Get("template")
	if !template.ValidName(name) {
		return queryError("template", "want a template name")
	}
	metricName, ok := metric.Canonical(q.Get("metric"))
	if !ok {
		return queryError("metric", "unknown metric %q: want a threshold metric such as rps, p50_ms, p99_ms or mean_ms", q.Get("metric"))
	}
	limit := defaultTrendLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTrendLimit {
			return queryError("limit", "want 1 to %d", maxTrendLimit)
		}
		limit = n
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "svg" {
		return queryError("format", "want json or svg")
	}
	owner, err := templateOwner(c)
	if err != nil {
		return err
	}
	labels := map[string]string{job.LabelTemplate: name}
	if b := q.Get("branch"); b != "" {
		labels[job.LabelBranch] = b
	}
	ctx := c.Request().Context()
	jobs, err := jobend.History(ctx, s.store, owner, labels, time.Time{}, limit, "")
	if err != nil {
		return err
	}
	out := TrendResponse{Template: name, Metric: metricName, Target: q.Get("target"), Branch: q.Get("branch"),
		Points: analysis.TrendSeries(metricName, q.Get("target"), jobs)}
	if out.Points == nil {
		out.Points = []analysis.TrendPoint{}
	}
	if format == "svg" {
		title := name + ": " + metricName
		if out.Branch != "" {
			title += " of " + out.Branch
		}
		var buf bytes.Buffer
		if err := report.WriteTrendSVG(&buf, title, metricName, out.Points); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "image/svg+xml", buf.Bytes())
	}
	return c.JSON(http.StatusOK, out)
}
