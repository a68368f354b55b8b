package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/report"
)

// handleGetReport renders a job's report in one of internal/report's
// formats.
//
//	@Summary		Get a job's report
//	@Description	Every stored run and the job's analysis (means over repeats, comparison to the baseline, saturation, verdict), rendered as ab or http_load text per run, JSON, CSV (one row per run, every ab field), Markdown tables (rows = targets, columns = concurrency), an SVG or PNG chart (per request count, duration or rate: req/s bars with ± 1 sd error bars over repeats and p50/p99 latency on a log axis against concurrency), one self-contained HTML file (the chart, the tables, the verdict and each run's ab text; it loads nothing else) or a gnuplot data file. Without format the Accept header chooses (text/plain is ab); otherwise JSON. A running job reports the runs stored so far.
//	@Tags			jobs
//	@Produce		json
//	@Produce		plain
//	@Produce		text/csv
//	@Produce		text/markdown
//	@Produce		image/svg+xml
//	@Produce		image/png
//	@Produce		html
//	@Produce		text/tab-separated-values
//	@Param			id		path		string	true	"job id"
//	@Param			format	query		string	false	"report format; when absent, chosen by Accept, else json"	Enums(ab, http_load, json, csv, markdown, svg, png, html, gnuplot)
//	@Success		200		{string}	string	"the report"
//	@Failure		400		{object}	Problem	"unknown format (field: format)"
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
	id := c.Param("id")
	j, runs, a, err := s.jobResults(c, id)
	if err != nil {
		return err
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
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", id+"."+extension(f)))
	return c.Blob(http.StatusOK, f.ContentType(), buf.Bytes())
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

// extension names the file a browser saves the report as.
func extension(f report.Format) string {
	switch f {
	case report.FormatMarkdown:
		return "md"
	case report.FormatGnuplot:
		return "tsv"
	case report.FormatAB, report.FormatHTTPLoad:
		return string(f) + ".txt"
	}
	return string(f)
}
