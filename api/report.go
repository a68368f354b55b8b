package api

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/report"
)

// handleGetReport renders a job's report in one of internal/report's
// formats.
//
//	@Summary		Get a job's report
//	@Description	Every stored run and the job's analysis (means over repeats, comparison to the baseline, saturation, verdict), rendered as ab or http_load text per run, JSON, CSV (one row per run, every ab field, then aborted_by and abort_reason for a run a threshold ended early), Markdown tables (rows = targets, columns = concurrency; a ramp's rate by its range, 100→5000/s; the capacity search; the runs a threshold aborted), an SVG or PNG chart (per request count, duration or rate: req/s bars with ± 1 sd error bars over repeats and p50/p99 latency on a log axis against concurrency), one self-contained HTML file (the chart, the tables, the verdict and each run's ab text; it loads nothing else), a gnuplot data file, each run's timeline as CSV or NDJSON (timeline-csv, timeline-ndjson: one row per interval per run, led by the run's target, point, concurrency, stop and repeat), each run's latency distribution as HdrHistogram's percentile text (hgrm, values in ms; HdrHistogram's plotter draws one run per file: add run=POINT:REPEAT), or the verdict as JUnit XML for CI dashboards (junit: a testsuite per target, a testcase per threshold and cell with a failure naming the value and the bound, an error for a cell with no value to judge, the cells' means as the suites' properties). Without format the Accept header chooses (text/plain is ab); otherwise JSON. A running job reports the runs stored so far.
//	@Tags			jobs
//	@Produce		json
//	@Produce		plain
//	@Produce		text/csv
//	@Produce		text/markdown
//	@Produce		image/svg+xml
//	@Produce		image/png
//	@Produce		html
//	@Produce		text/tab-separated-values
//	@Produce		application/x-ndjson
//	@Produce		application/xml
//	@Param			id		path		string	true	"job id"
//	@Param			format	query		string	false	"report format; when absent, chosen by Accept, else json"	Enums(ab, http_load, json, csv, markdown, svg, png, html, gnuplot, timeline-csv, timeline-ndjson, hgrm, junit)
//	@Param			chart	query		string	false	"with format svg or png, the chart: sweep (the default: every point against concurrency), capacity (the capacity search's: each probe's p50 and p99 latency against its offered rate per target, probes that missed the SLO hollow, the SLO's latency bounds as lines, the capacity found with its interval shaded), timeline (one run's successful req/s and errors/s, open-model intended and achieved rates, and p50/p90/p99 on a log axis, per interval against time) or distribution (one run's latency by percentile on a log nines axis, as HdrHistogram's plotter draws it)"	Enums(sweep, capacity, timeline, distribution)
//	@Param			run		query		string	false	"POINT:REPEAT (from 0, as in the results): only that run, for hgrm, timeline-csv and timeline-ndjson; the run drawn, for chart timeline or distribution (may be left out for a job of one run)"
//	@Success		200		{string}	string	"the report"
//	@Failure		400		{object}	Problem	"unknown format (field: format); an unknown chart or one not drawn in that format (field: chart); a run the job has not stored, malformed, not named for a run's chart, or with another format (field: run)"
//	@Failure		404		{object}	Problem
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/report [get]
func (s *Server) handleGetReport(c echo.Context) error {
	f, err := reportFormat(c.Request())
	if err != nil {
		return err
	}
	chart, err := reportChart(c.Request(), f)
	if err != nil {
		return err
	}
	switch chart {
	case report.ChartSweep:
	case report.ChartCapacity:
		return s.capacityChart(c, f)
	default:
		return s.runChart(c, f, chart)
	}
	only, err := runQuery(c, f)
	if err != nil {
		return err
	}
	id := c.Param("id")
	j, runs, a, err := s.jobResults(c, id)
	if err != nil {
		return err
	}
	if only != nil {
		if runs = selectRun(runs, *only); len(runs) == 0 {
			return queryError("run", "job %s has no stored run %d:%d", id, only.Point, only.Repeat)
		}
	}
	// Render fully before sending: a renderer error then becomes a clean
	// problem response instead of a truncated 200.
	var buf bytes.Buffer
	if err := report.Write(&buf, f, j, runs, a); err != nil {
		return fmt.Errorf("api: report %s: %w", id, err)
	}
	c.Response().Header().Set("Vary", "Accept")
	if f == report.FormatHTML {
		// The report is self-contained; the policy keeps it so when opened
		// from the API, whatever a job's names hold.
		c.Response().Header().Set("Content-Security-Policy", htmlReportCSP)
	}
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", id+"."+f.Extension()))
	return c.Blob(http.StatusOK, f.ContentType(), buf.Bytes())
}

// runChart draws one run's chart, chosen by ?run= (SelectRun's form).
func (s *Server) runChart(c echo.Context, f report.Format, chart report.Chart) error {
	id := c.Param("id")
	j, runs, _, err := s.jobResults(c, id)
	if err != nil {
		return err
	}
	run, err := report.SelectRun(runs, c.QueryParam("run"))
	if err != nil {
		return runProblem(err)
	}
	var buf bytes.Buffer
	if err := report.WriteRunChart(&buf, f, chart, j, run); err != nil {
		return fmt.Errorf("api: report %s: %w", id, err)
	}
	c.Response().Header().Set("Vary", "Accept")
	name := fmt.Sprintf("%s.%s.%d-%d.%s", id, chart, run.Point, run.Repeat, f.Extension())
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name))
	return c.Blob(http.StatusOK, f.ContentType(), buf.Bytes())
}

// capacityChart draws the job's capacity search from its analysis.
func (s *Server) capacityChart(c echo.Context, f report.Format) error {
	if c.QueryParam("run") != "" {
		return queryError("run", "chart capacity draws every probe of the job's search: leave run out")
	}
	id := c.Param("id")
	j, _, a, err := s.jobResults(c, id)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteCapacityChart(&buf, f, j, a); err != nil {
		return fmt.Errorf("api: report %s: %w", id, err)
	}
	c.Response().Header().Set("Vary", "Accept")
	name := fmt.Sprintf("%s.%s.%s", id, report.ChartCapacity, f.Extension())
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", name))
	return c.Blob(http.StatusOK, f.ContentType(), buf.Bytes())
}

// reportChart reads ?chart=, the sweep's chart when absent; a run's chart
// is an image.
func reportChart(r *http.Request, f report.Format) (report.Chart, error) {
	name := r.URL.Query().Get("chart")
	if name == "" {
		return report.ChartSweep, nil
	}
	chart, err := report.ParseChart(name)
	if err != nil {
		names := make([]string, 0, len(report.Charts()))
		for _, c := range report.Charts() {
			names = append(names, string(c))
		}
		return "", errcode.Wrapf(err, errcode.BadQuery, "unknown chart %q: want one of %s", name, strings.Join(names, ", ")).WithField("chart")
	}
	if chart != report.ChartSweep && f != report.FormatSVG && f != report.FormatPNG {
		return "", errcode.Newf(errcode.BadQuery, "chart %s is drawn as format svg or png, not %s", chart, f).WithField("chart")
	}
	return chart, nil
}

// maxListedRuns bounds the run ids a problem about ?run= lists.
const maxListedRuns = 8

// runProblem says why ?run= names no run of a chart, and which runs
// there are.
func runProblem(err error) error {
	var ce *report.RunChoiceError
	if !errors.As(err, &ce) {
		return fmt.Errorf("api: choose a run: %w", err)
	}
	ids := ce.Stored
	listed := strings.Join(ids[:min(len(ids), maxListedRuns)], ", ")
	if len(ids) > maxListedRuns {
		listed += fmt.Sprintf(", … (%d in all)", len(ids))
	}
	var msg string
	switch {
	case len(ids) == 0:
		msg = "the job has no stored run yet"
	case ce.Malformed:
		msg = fmt.Sprintf("run %q is not POINT:REPEAT, such as 0:0 (the first repeat of the first point); the job's runs are %s", ce.ID, listed)
	case ce.ID == "":
		msg = fmt.Sprintf("the job has %d runs: name one as run=POINT:REPEAT; they are %s", len(ids), listed)
	default:
		msg = fmt.Sprintf("the job has no stored run %s; its runs are %s", ce.ID, listed)
	}
	return errcode.Wrap(err, errcode.BadQuery, msg).WithField("run")
}

// htmlReportCSP allows the HTML report its inline stylesheet and SVG and
// nothing else: no script, no fetch, no frame.
const htmlReportCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// reportFormat reads ?format=, falling back to the Accept header and then
// to JSON, the format every client can read.
func reportFormat(r *http.Request) (report.Format, error) {
	if name := r.URL.Query().Get("format"); name != "" {
		f, err := report.ParseFormat(name)
		if err != nil {
			names := make([]string, 0, len(report.Formats()))
			for _, f := range report.Formats() {
				names = append(names, string(f))
			}
			return "", errcode.Wrapf(err, errcode.BadQuery, "unknown format %q: want one of %s", name, strings.Join(names, ", ")).WithField("format")
		}
		return f, nil
	}
	if f, ok := report.FormatFromAccept(r.Header.Get("Accept")); ok {
		return f, nil
	}
	return report.FormatJSON, nil
}

// runQuery reads &run=POINT:REPEAT, which narrows the per-run data formats
// to one run: a .hgrm file for HdrHistogram's plotter must hold one
// distribution, which it draws as one series. nil when absent.
func runQuery(c echo.Context, f report.Format) (*job.RunKey, error) {
	v := c.QueryParam("run")
	if v == "" {
		return nil, nil
	}
	switch f {
	case report.FormatHGRM, report.FormatTimelineCSV, report.FormatTimelineNDJSON:
	default:
		return nil, queryError("run", "run selects one run of the hgrm, timeline-csv and timeline-ndjson formats, or the run of chart=timeline or chart=distribution (format svg or png), not of %s", f)
	}
	k, ok := report.ParseRunID(v)
	if !ok {
		return nil, queryError("run", "run %q is not POINT:REPEAT, two numbers from 0 as the results number runs", v)
	}
	return &k, nil
}

// selectRun keeps the run k of runs, if stored.
func selectRun(runs []job.Run, k job.RunKey) []job.Run {
	for _, r := range runs {
		if r.RunKey == k {
			return []job.Run{r}
		}
	}
	return nil
}
