package report

import (
	"errors"
	"testing"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{"ab", FormatAB}, {"http_load", FormatHTTPLoad}, {"json", FormatJSON}, {"csv", FormatCSV},
		{"markdown", FormatMarkdown}, {"md", FormatMarkdown}, {"SVG", FormatSVG}, {" gnuplot ", FormatGnuplot},
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
		FormatGnuplot: "text/tab-separated-values; charset=utf-8",
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
		{"text/html, image/svg+xml;q=0.9, */*;q=0.8", FormatSVG, true},
		{"text/csv;q=0.5, text/markdown", FormatMarkdown, true},
		{"text/csv, text/markdown", FormatCSV, true}, // tie: the earlier wins
		{"text/markdown;q=0", "", false},
		{"*/*", "", false},
		{"", "", false},
		{"text/html,application/xhtml+xml", "", false},
		{"text/csv;q=abc", "", false},
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
