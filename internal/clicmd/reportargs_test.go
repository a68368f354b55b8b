package clicmd

import (
	"io"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/report"
)

// TestReportFormatFromOut: without --format, `benchq report` fetches the
// format --out's name tells, as `benchq submit --out` reads it.
func TestReportFormatFromOut(t *testing.T) {
	tests := []struct {
		args []string
		want report.Format
	}{
		{[]string{"j1"}, report.FormatMarkdown},
		{[]string{"j1", "--out", "r.json"}, report.FormatJSON},
		{[]string{"j1", "--out", "r.tsv"}, report.FormatGnuplot},
		{[]string{"j1", "--out", "report"}, report.FormatMarkdown},
		{[]string{"j1", "--out", "r.json", "--format", "csv"}, report.FormatCSV},
	}
	for _, tt := range tests {
		a, err := parseReportArgs(tt.args, func(string) string { return "" }, io.Discard)
		if err != nil || a.format != tt.want {
			t.Errorf("parseReportArgs(%q) = format %q, %v; want %q", tt.args, a.format, err, tt.want)
		}
	}
}

// TestReportChartArgs: --chart asks for one run's chart, as svg unless
// --format or --out's extension says png; an unknown chart is a usage
// error.
func TestReportChartArgs(t *testing.T) {
	tests := []struct {
		args   []string
		format report.Format
		chart  report.Chart
		run    string
		err    string
	}{
		{[]string{"j1", "--chart", "timeline", "--run", "0:1"}, report.FormatSVG, report.ChartTimeline, "0:1", ""},
		{[]string{"j1", "--chart", "distribution", "--out", "d.png"}, report.FormatPNG, report.ChartDistribution, "", ""},
		{[]string{"j1", "--chart", "timeline", "--format", "png"}, report.FormatPNG, report.ChartTimeline, "", ""},
		{[]string{"j1", "--chart", "pie"}, "", "", "", "unknown chart"},
	}
	for _, tt := range tests {
		a, err := parseReportArgs(tt.args, func(string) string { return "" }, io.Discard)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseReportArgs(%q) = %v, want an error saying %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || a.format != tt.format || a.chart != tt.chart || a.run != tt.run {
			t.Errorf("parseReportArgs(%q) = format %q, chart %q, run %q, %v; want %q, %q, %q", tt.args, a.format, a.chart, a.run, err, tt.format, tt.chart, tt.run)
		}
	}
}
