package clicmd

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/report"
)

// TestSubmitJUnitArgs: --junit FILE is one more report to write once the
// job ends, in JUnit whatever FILE's extension; it needs --wait, as --out
// does, and is given once.
func TestSubmitJUnitArgs(t *testing.T) {
	tests := []struct {
		args []string
		outs []outFile
		err  string
	}{
		{args: []string{"job.json", "--wait", "--junit", "TEST-benchq.xml"}, outs: []outFile{{"TEST-benchq.xml", report.FormatJUnit}}},
		{args: []string{"job.json", "--wait", "--out", "r.md", "--junit", "results.junit"}, outs: []outFile{{"r.md", report.FormatMarkdown}, {"results.junit", report.FormatJUnit}}},
		{args: []string{"job.json", "--wait", "--junit", "verdict.txt"}, outs: []outFile{{"verdict.txt", report.FormatJUnit}}}, // not ab's text
		{args: []string{"job.json", "--wait", "--out", "r.xml"}, outs: []outFile{{"r.xml", report.FormatJUnit}}},
		{args: []string{"job.json", "--junit", "junit.xml"}, err: "--junit needs --wait"},
		{args: []string{"job.json", "--wait", "--junit", "a.xml", "--junit", "b.xml"}, err: "given twice"},
		{args: []string{"job.json", "--wait", "--junit", ""}, err: "want a file name"},
	}
	for _, tt := range tests {
		a, err := parseSubmitArgs(tt.args, Env{Getenv: func(string) string { return "" }, Stderr: io.Discard})
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseSubmitArgs(%q) = %v, want an error saying %q", tt.args, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("parseSubmitArgs(%q) = %v", tt.args, err)
		case tt.err == "" && !slices.Equal(a.outs, tt.outs):
			t.Errorf("parseSubmitArgs(%q) outs = %v, want %v", tt.args, a.outs, tt.outs)
		}
	}
}
