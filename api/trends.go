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
	// ChangePoints, with change_points=true, are the shifts found in the
	// points: per cell and testbed (one series across testbeds with
	// testbed=any), oldest job first.
	ChangePoints []job.ChangePoint `json:"change_points,omitzero"`
}

// handleGetTrend serves a metric's series across a template's jobs.
//
//	@Summary		Trend of a metric across a template's jobs
//	@Description	The caller's last `limit` succeeded jobs created from the template (label template=NAME), of one branch when given, oldest first: per job and cell the mean of the metric over its repeats, with the job id, creation time, verdict, commit label and the testbed the runs were measured on. metric is a threshold metric (rps, p50_ms, p99_ms, mean_ms, ...; p99 and mean stand for p99_ms and mean_ms); target a target name or URL; testbed a testbed id keeps that testbed's points. format=svg answers the chart as SVG.
//	@Description	change_points=true adds the change points of the series (E-Divisive means with a t-test): per cell and testbed apart (testbed=any: one series across testbeds), the first job after each shift with its commit, the means before and after, the magnitude ((after-before)/|before|), the p-value, and whether it was acknowledged; the chart marks them. max_pvalue and min_magnitude default to the newest job's change_points options, else 0.001 and 0.05. Each change point keeps its id across requests and job ends, for POST /v1/trends/change-points/{id}/acknowledge.
//	@Tags			trends
//	@Produce		json
//	@Produce		image/svg+xml
//	@Param			template	query		string	true	"template name"
//	@Param			metric		query		string	true	"threshold metric"	example(p99_ms)
//	@Param			target		query		string	false	"target name or URL; every target when left out"
//	@Param			branch		query		string	false	"only jobs labelled with this branch"
//	@Param			limit		query		int		false	"jobs, newest first (default 50, at most 200)"
//	@Param			format		query		string	false	"json (default) or svg"
//	@Param			testbed		query		string	false	"a testbed id: only its points; any: change points over every testbed's runs as one series"
//	@Param			change_points	query	bool	false	"add the change points of the series"
//	@Param			max_pvalue	query		number	false	"largest p-value of a change point (0 < p <= 1)"	example(0.001)
//	@Param			min_magnitude	query	number	false	"smallest relative change of the mean of a change point (0 to 100)"	example(0.05)
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
	cq, err := changeQuery(c)
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
		Points: analysis.OnTestbed(analysis.TrendSeries(metricName, q.Get("target"), jobs), cq.testbed)}
	if out.Points == nil {
		out.Points = []analysis.TrendPoint{}
	}
	if cq.on {
		cq.Template, cq.Branch, cq.Metric, cq.Target = name, out.Branch, metricName, out.Target
		if out.ChangePoints, err = s.trendChangePoints(ctx, owner, cq, jobs); err != nil {
			return err
		}
	}
	if format == "svg" {
		title := name + ": " + metricName
		if out.Branch != "" {
			title += " of " + out.Branch
		}
		var buf bytes.Buffer
		if err := report.WriteTrendSVGMarked(&buf, title, metricName, out.Points, out.ChangePoints); err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "image/svg+xml", buf.Bytes())
	}
	return c.JSON(http.StatusOK, out)
}
