package report

import (
	"errors"
	"fmt"
	"mime"
	"path/filepath"
	"strconv"
	"strings"
)

// Format names one rendering of a job's report.
type Format string

// The formats Write renders.
const (
	FormatAB       Format = "ab"
	FormatHTTPLoad Format = "http_load"
	FormatJSON     Format = "json"
	FormatCSV      Format = "csv"
	FormatMarkdown Format = "markdown"
	FormatSVG      Format = "svg"
	FormatPNG      Format = "png"
	FormatHTML     Format = "html"
	FormatGnuplot  Format = "gnuplot"
	// Per run, interval by interval, and per run its latency distribution
	// in HdrHistogram's percentile text.
	FormatTimelineCSV    Format = "timeline-csv"
	FormatTimelineNDJSON Format = "timeline-ndjson"
	FormatHGRM           Format = "hgrm"
	// The verdict as JUnit XML, for CI dashboards (junit.go).
	FormatJUnit Format = "junit"
)

// ErrUnknownFormat is returned by ParseFormat and Write for a format name
// they do not know.
var ErrUnknownFormat = errors.New("unknown format")

// formatInfo is one row of the format table: what a server sends a
// format as, and what a file holding it is called.
type formatInfo struct {
	format Format
	// label names the format for a person (the dashboard's download list).
	label       string
	contentType string
	// ext is the file name extension, without the dot. ab's and
	// http_load's text are plain text, told apart by a prefix.
	ext string
	// negotiable: an Accept header naming the content type's media type
	// picks this format (FormatFromAccept). text/html and image/png are
	// not: every browser sends them, for pages and for images, and would
	// be switched from the default format by it; ?format=html and
	// ?format=png ask for them. text/plain picks ab's report, the text
	// most scripts already parse.
	negotiable bool
}

// formatTable is the one table of report formats, in the order the docs
// present them.
func formatTable() []formatInfo {
	return []formatInfo{
		{FormatAB, "ab text", "text/plain; charset=utf-8", "ab.txt", true},
		{FormatHTTPLoad, "http_load text", "text/plain; charset=utf-8", "http_load.txt", false},
		{FormatJSON, "JSON", "application/json", "json", true},
		{FormatCSV, "CSV", "text/csv; charset=utf-8", "csv", true},
		{FormatMarkdown, "Markdown", "text/markdown; charset=utf-8", "md", true},
		{FormatSVG, "SVG chart", "image/svg+xml", "svg", true},
		{FormatPNG, "PNG chart", "image/png", "png", false},
		{FormatHTML, "HTML", "text/html; charset=utf-8", "html", false},
		{FormatGnuplot, "gnuplot data", "text/tab-separated-values; charset=utf-8", "tsv", true},
		// text/csv and text/plain already pick csv and ab.
		{FormatTimelineCSV, "timeline CSV", "text/csv; charset=utf-8", "timeline.csv", false},
		{FormatTimelineNDJSON, "timeline NDJSON", "application/x-ndjson", "timeline.ndjson", true},
		{FormatHGRM, "latency distribution (.hgrm)", "text/plain; charset=utf-8", "hgrm", false},
		// Not negotiable: browsers send application/xml in Accept, and a
		// page asking for the default format must not get XML. CI tools
		// collect *.xml, the only XML format here.
		{FormatJUnit, "JUnit XML", "application/xml", "xml", false},
	}
}

func (f Format) info() formatInfo {
	for _, row := range formatTable() {
		if row.format == f {
			return row
		}
	}
	return formatInfo{format: f}
}

// Formats lists every format in the order the docs present them.
func Formats() []Format {
	rows := formatTable()
	out := make([]Format, len(rows))
	for i, row := range rows {
		out[i] = row.format
	}
	return out
}

// ParseFormat reads a format name as given in ?format=; case and the
// short alias "md" are forgiven, nothing else is guessed.
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if name == "md" {
		return FormatMarkdown, nil
	}
	for _, f := range Formats() {
		if string(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownFormat, s, formatList())
}

func formatList() string {
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// FormatChoices names every format for help text: "ab, http_load, ... or
// gnuplot".
func FormatChoices() string {
	list := formatList()
	i := strings.LastIndex(list, ", ")
	return list[:i] + " or " + list[i+2:]
}

// ContentType is the media type a server sends with the format; "" for a
// format Formats does not list.
func (f Format) ContentType() string { return f.info().contentType }

// Extension is the file name extension (without the dot) of a file
// holding the format: "md", "tsv", "ab.txt"; "" for a format Formats does
// not list.
func (f Format) Extension() string { return f.info().ext }

// Label names the format for a person: "SVG chart".
func (f Format) Label() string { return f.info().label }

// acceptable maps the media types FormatFromAccept understands.
func acceptable() map[string]Format {
	known := map[string]Format{}
	for _, row := range formatTable() {
		if row.negotiable {
			mt, _, _ := strings.Cut(row.contentType, ";")
			known[mt] = row.format
		}
	}
	return known
}

// FormatOfPath reads the format of a file to write from its name: a
// format's Extension (".md", ".tsv", ".http_load.txt"), ".txt" alone for
// ab's text, or a format's name (".markdown", ".gnuplot"), case forgiven.
func FormatOfPath(path string) (Format, error) {
	base := strings.ToLower(filepath.Base(path))
	ext := strings.TrimPrefix(filepath.Ext(base), ".")
	if ext == "" {
		return "", fmt.Errorf("%s has no extension to tell the report format (.md, .json, .svg, .csv, .txt)", path)
	}
	// The longest extension first, so "r.http_load.txt" is http_load's
	// and not ab's ".txt".
	var best formatInfo
	for _, row := range formatTable() {
		if strings.HasSuffix(base, "."+row.ext) && len(row.ext) > len(best.ext) {
			best = row
		}
	}
	if best.ext != "" {
		return best.format, nil
	}
	if ext == "txt" {
		return FormatAB, nil
	}
	f, err := ParseFormat(ext)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// FormatFromAccept picks the format an Accept header prefers: the known
// media type with the highest q (the earliest on ties). Wildcards match
// nothing, so ok is false for "*/*" and the caller applies its default.
func FormatFromAccept(accept string) (Format, bool) {
	known := acceptable()
	var best Format
	bestQ := 0.0
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		f, ok := known[mt]
		if !ok {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if q > bestQ {
			best, bestQ = f, q
		}
	}
	return best, bestQ > 0
}
