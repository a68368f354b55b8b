package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/report"
)

// Exit statuses of `benchq report`.
const (
	reportExitOK       = 0
	reportExitFailed   = 1 // the server answered an error other than 404
	reportExitNotFound = 2 // no such job
	reportExitUsage    = 3 // bad command line, unreachable server, unwritable output
)

// defaultServer is where `benchq` with no arguments serves its API.
const defaultServer = "http://127.0.0.1:8080"

// reportArgs is `benchq report`'s parsed command line.
type reportArgs struct {
	id      string
	format  report.Format
	server  string
	out     string
	timeout time.Duration
}

// runReport is `benchq report JOB_ID [--format F] [--server URL] [--out FILE]`:
// it fetches GET /v1/jobs/{id}/report?format=F and writes the body to
// stdout or FILE.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return reportMain(ctx, args, os.Getenv, stdout, stderr)
}

// reportMain is runReport with the environment passed in, for tests.
func reportMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	a, err := parseReportArgs(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return reportExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchq report: %v\n", err)
		return reportExitUsage
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
		return reportExitUsage
	}
	return reportExitOK
}

// parseReportArgs reads flags before and after the job id, as users type
// `benchq report JOB --format csv` as often as the flags-first form.
func parseReportArgs(args []string, getenv func(string) string, stderr io.Writer) (reportArgs, error) {
	a := reportArgs{server: defaultServer}
	if s := getenv("BENCHQ_SERVER"); s != "" {
		a.server = s
	}
	var format string
	fs := flag.NewFlagSet("benchq report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: benchq report JOB_ID [--format F] [--server URL] [--out FILE]")
		fs.PrintDefaults()
	}
	fs.StringVar(&format, "format", string(report.FormatMarkdown),
		"report format: ab, http_load, json, csv, markdown, svg or gnuplot")
	fs.StringVar(&a.server, "server", a.server, "benchq API base URL (env BENCHQ_SERVER)")
	fs.StringVar(&a.out, "out", "", "write the report to this file instead of stdout")
	fs.DurationVar(&a.timeout, "timeout", time.Minute, "give up after this long")
	var ids []string
	for {
		if err := fs.Parse(args); err != nil {
			return a, err
		}
		if fs.NArg() == 0 {
			break
		}
		ids = append(ids, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(ids) != 1 {
		fs.Usage()
		return a, fmt.Errorf("want exactly one job id, got %d", len(ids))
	}
	a.id = ids[0]
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
	u := strings.TrimRight(a.server, "/") + "/v1/jobs/" + url.PathEscape(a.id) + "/report?format=" + url.QueryEscape(string(a.format))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, reportExitUsage, fmt.Errorf("server URL %q: %w", a.server, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, reportExitUsage, fmt.Errorf("fetch report: %w", err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, reportExitOK, nil
	}
	defer resp.Body.Close()
	msg := problemDetail(resp.Body)
	switch resp.StatusCode {
	case http.StatusNotFound:
		return nil, reportExitNotFound, fmt.Errorf("job %s not found (%s)", a.id, msg)
	case http.StatusBadRequest:
		return nil, reportExitUsage, fmt.Errorf("server refused the request: %s", msg)
	}
	return nil, reportExitFailed, fmt.Errorf("server answered %s: %s", resp.Status, msg)
}

// problemDetail reads what a problem+json body says, or its first bytes
// when it is something else.
func problemDetail(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	var p struct{ Title, Detail string }
	if json.Unmarshal(b, &p) == nil && p.Title != "" {
		if p.Detail != "" {
			return p.Title + ": " + p.Detail
		}
		return p.Title
	}
	return strings.TrimSpace(string(b))
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
