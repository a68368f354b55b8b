package report

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{"ab", FormatAB}, {"http_load", FormatHTTPLoad}, {"json", FormatJSON}, {"csv", FormatCSV},
		{"markdown", FormatMarkdown}, {"md", FormatMarkdown}, {"SVG", FormatSVG}, {" gnuplot ", FormatGnuplot},
		{"timeline-csv", FormatTimelineCSV}, {"Timeline-NDJSON", FormatTimelineNDJSON}, {"hgrm", FormatHGRM},
		{"JUnit", FormatJUnit},
	}
	for _, tt := range tests {
		got, err := ParseFormat(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseFormat(%q) = %q, %v, want %q, nil", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "pdf", "text", "jsonx"} {
		if got, err := ParseFormat(bad); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("ParseFormat(%q) = %q, %v, want ErrUnknownFormat", bad, got, err)
		}
	}
}

func TestContentType(t *testing.T) {
	want := map[Format]string{
		FormatAB: "text/plain; charset=utf-8", FormatHTTPLoad: "text/plain; charset=utf-8",
		FormatJSON: "application/json", FormatCSV: "text/csv; charset=utf-8",
		FormatMarkdown: "text/markdown; charset=utf-8", FormatSVG: "image/svg+xml",
		FormatPNG: "image/png", FormatHTML: "text/html; charset=utf-8",
		FormatGnuplot:     "text/tab-separated-values; charset=utf-8",
		FormatTimelineCSV: "text/csv; charset=utf-8", FormatTimelineNDJSON: "application/x-ndjson",
		FormatHGRM: "text/plain; charset=utf-8", FormatJUnit: "application/xml",
	}
	for _, f := range Formats() {
		if got := f.ContentType(); got != want[f] {
			t.Errorf("%s.ContentType() = %q, want %q", f, got, want[f])
		}
	}
}

func TestFormatFromAccept(t *testing.T) {
	tests := []struct {
		accept string
		want   Format
		ok     bool
	}{
		{"text/markdown", FormatMarkdown, true},
		{"text/csv; charset=utf-8", FormatCSV, true},
		{"image/svg+xml", FormatSVG, true},
		{"application/json", FormatJSON, true},
		{"text/plain", FormatAB, true},
		{"text/tab-separated-values", FormatGnuplot, true},
		{"application/x-ndjson", FormatTimelineNDJSON, true},
		{"text/html, image/svg+xml;q=0.9, */*;q=0.8", FormatSVG, true},
		{"text/csv;q=0.5, text/markdown", FormatMarkdown, true},
		{"text/csv, text/markdown", FormatCSV, true}, // tie: the earlier wins
		{"text/markdown;q=0", "", false},
		{"*/*", "", false},
		{"", "", false},
		{"text/html,application/xhtml+xml", "", false},
		{"text/csv;q=abc", "", false},
		// A browser's Accept names application/xml: it must not turn the
		// default JSON into JUnit.
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "", false},
	}
	for _, tt := range tests {
		got, ok := FormatFromAccept(tt.accept)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FormatFromAccept(%q) = %q, %v, want %q, %v", tt.accept, got, ok, tt.want, tt.ok)
		}
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := Write(nil, Format("pdf"), fixtureJob(), nil, emptyAnalysis())
	if !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Write(pdf) = %v, want ErrUnknownFormat", err)
	}
}

// TestFormatTable: every format has a label, a content type and an
// extension of its own, and a file named with that extension is read back
// as the format, so the API's download names and the CLI's --out agree.
func TestFormatTable(t *testing.T) {
	seen := map[string]Format{}
	for _, f := range Formats() {
		if f.Label() == "" || f.ContentType() == "" || f.Extension() == "" {
			t.Errorf("%s: label %q, content type %q, extension %q; want all three", f, f.Label(), f.ContentType(), f.Extension())
		}
		if other, dup := seen[f.Extension()]; dup {
			t.Errorf("%s and %s share the extension %q", f, other, f.Extension())
		}
		seen[f.Extension()] = f
		for _, name := range []string{"report." + f.Extension(), "dir.v2/01JC3W9Q." + strings.ToUpper(f.Extension()), "report." + string(f)} {
			if got, err := FormatOfPath(name); err != nil || got != f {
				t.Errorf("FormatOfPath(%q) = %q, %v; want %s", name, got, err, f)
			}
		}
	}
}

func TestFormatOfPath(t *testing.T) {
	tests := []struct {
		path string
		want Format
		err  string
	}{
		{"r.md", FormatMarkdown, ""},
		{"r.txt", FormatAB, ""}, // plain text is ab's report
		{"r.ab.txt", FormatAB, ""},
		{"r.http_load.txt", FormatHTTPLoad, ""},
		{"r.tsv", FormatGnuplot, ""}, // the name the API gives a gnuplot download
		{"r.gnuplot", FormatGnuplot, ""},
		{"r.timeline.csv", FormatTimelineCSV, ""}, // the longer extension, not the CSV's
		{"r.timeline.ndjson", FormatTimelineNDJSON, ""},
		{"run.hgrm", FormatHGRM, ""},
		{"TEST-benchq.xml", FormatJUnit, ""}, // the one XML format: CI tools collect *.xml
		{"report", "", "no extension"},
		{"r.pdf", "", "unknown format"},
	}
	for _, tt := range tests {
		got, err := FormatOfPath(tt.path)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("FormatOfPath(%q) = %q, %v; want %q, error with %q", tt.path, got, err, tt.want, tt.err)
		}
	}
	if got, want := FormatChoices(), "ab, http_load, json, csv, markdown, svg, png, html, gnuplot, timeline-csv, timeline-ndjson, hgrm or junit"; got != want {
		t.Errorf("FormatChoices() = %q, want %q", got, want)
	}
}
