package clicmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/report"
)

// Exit statuses of `benchq report`.
const (
	ReportExitOK       = 0
	ReportExitFailed   = 1 // the server answered an error other than 404
	ReportExitNotFound = 2 // no such job
	ReportExitUsage    = 3 // bad command line, unreachable server, unwritable output
)

// DefaultServer is where `benchq` with no arguments serves its API.
const DefaultServer = "http://127.0.0.1:8080"

// reportArgs is `benchq report`'s parsed command line.
type reportArgs struct {
	id      string
	format  report.Format
	chart   report.Chart // "" or ChartSweep: the job's report; else the capacity search's or one run's chart
	run     string
	api     *APIFlags
	out     string
	timeout time.Duration
}

// Report is `benchq report JOB_ID [--format F] [--chart C] [--run P:R]
// [--server URL] [--out FILE]`: it fetches GET
// /v1/jobs/{id}/report?format=F (with chart and run, one run's chart) and
// writes the body to stdout or FILE.
func Report(ctx context.Context, args []string, env Env) int {
	getenv, stdout, stderr := env.Getenv, env.Stdout, env.Stderr
	a, err := parseReportArgs(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ReportExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchq report: %v\n", err)
		return ReportExitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	body, code, err := fetchReport(ctx, a)
	if err != nil {
		fmt.Fprintf(stderr, "benchq report: %v\n", err)
		return code
	}
	defer body.Close()
	if err := writeReport(body, a.out, stdout); err != nil {
		fmt.Fprintf(stderr, "benchq report: %v\n", err)
		return ReportExitUsage
	}
	return ReportExitOK
}

const reportSynopsis = `benchq report JOB_ID [--format F] [--run POINT:REPEAT] [--out FILE] [flags]
benchq report JOB_ID --chart capacity|timeline|distribution [--run POINT:REPEAT] [--out FILE.svg|.png]

Fetches a job's report, to stdout or --out FILE, in any of the formats
--format names, or the capacity search's or one run's chart as svg or png.`

// parseReportArgs reads flags before and after the job id, as users type
// `benchq report JOB --format csv` as often as the flags-first form.
func parseReportArgs(args []string, getenv func(string) string, stderr io.Writer) (reportArgs, error) {
	var a reportArgs
	var format, chart string
	fs := NewFlagSet("benchq report", reportSynopsis, stderr)
	fs.StringVar(&format, "format", "",
		"report format: "+report.FormatChoices()+"; without it, the one --out's extension names, else markdown (svg for a --chart)")
	fs.StringVar(&chart, "chart", "", "a chart instead of the report: capacity (the capacity search's probes' p50 and p99 against offered rate, the SLO and the capacity found), or one run's timeline (req/s, errors/s and latency percentiles against time) or distribution (latency by percentile)")
	a.api = AddAPIFlags(fs, getenv)
	fs.StringVar(&a.run, "run", "", "only this run (point and repeat from 0, as in the results) of an hgrm, timeline-csv or timeline-ndjson report, or the run of --chart (may be left out for a job of one run)")
	fs.StringVar(&a.out, "out", "", "write the report to this file instead of stdout")
	fs.DurationVar(&a.timeout, "timeout", time.Minute, "give up after this long")
	id, err := parseJobID(fs, args)
	if err != nil {
		return a, err
	}
	a.id = id
	if chart != "" {
		if a.chart, err = report.ParseChart(chart); err != nil {
			return a, err
		}
	}
	if format == "" {
		format = string(report.FormatMarkdown)
		if a.chart != "" && a.chart != report.ChartSweep {
			format = string(report.FormatSVG)
		}
		if f, err := report.FormatOfPath(a.out); a.out != "" && err == nil {
			format = string(f)
		}
	}
	f, err := report.ParseFormat(format)
	if err != nil {
		return a, err
	}
	a.format = f
	return a, nil
}

// fetchReport GETs the report; on failure it returns the exit code that
// fits the error.
func fetchReport(ctx context.Context, a reportArgs) (io.ReadCloser, int, error) {
	c, err := a.api.Client()
	if err != nil {
		return nil, ReportExitUsage, err
	}
	c.RequestTimeout = a.timeout
	body, err := c.ReportWith(ctx, a.id, client.ReportQuery{Format: string(a.format), Run: a.run, Chart: string(a.chart)})
	var ae *client.APIError
	switch {
	case err == nil:
		return body, ReportExitOK, nil
	case errors.Is(err, client.ErrNotFound):
		return nil, ReportExitNotFound, fmt.Errorf("job %s not found: %w", a.id, err)
	case !errors.As(err, &ae), ae.Status == http.StatusBadRequest:
		return nil, ReportExitUsage, err // unreachable server, or a request it refused
	}
	return nil, ReportExitFailed, err
}

// writeReport copies the body to the file, or to stdout when none is named.
func writeReport(body io.Reader, path string, stdout io.Writer) error {
	if path == "" {
		if _, err := io.Copy(stdout, body); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if _, err := io.Copy(f, body); err != nil {
		_ = f.Close()
		return fmt.Errorf("write report to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report to %s: %w", path, err)
	}
	return nil
}
