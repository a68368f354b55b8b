package clicmd

import (
	"io"
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
