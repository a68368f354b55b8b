package report

import (
	"errors"
	"fmt"
	"mime"
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
)

// ErrUnknownFormat is returned by ParseFormat and Write for a format name
// they do not know.
var ErrUnknownFormat = errors.New("unknown format")

// Formats lists every format in the order the docs present them.
func Formats() []Format {
	return []Format{FormatAB, FormatHTTPLoad, FormatJSON, FormatCSV, FormatMarkdown, FormatSVG, FormatPNG, FormatHTML, FormatGnuplot}
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

// ContentType is the media type a server sends with the format.
func (f Format) ContentType() string {
	switch f {
	case FormatJSON:
		return "application/json"
	case FormatCSV:
		return "text/csv; charset=utf-8"
	case FormatMarkdown:
		return "text/markdown; charset=utf-8"
	case FormatSVG:
		return "image/svg+xml"
	case FormatPNG:
		return "image/png"
	case FormatHTML:
		return "text/html; charset=utf-8"
	case FormatGnuplot:
		return "text/tab-separated-values; charset=utf-8"
	}
	return "text/plain; charset=utf-8" // ab, http_load
}

// acceptable maps the media types FormatFromAccept understands. text/plain
// is ab's report, the text most scripts already parse. text/html and
// image/png are left out on purpose: every browser sends them, for pages
// and for images, and would be switched from the default format by it;
// ?format=html and ?format=png ask for them.
func acceptable() map[string]Format {
	return map[string]Format{
		"application/json":          FormatJSON,
		"text/csv":                  FormatCSV,
		"text/markdown":             FormatMarkdown,
		"image/svg+xml":             FormatSVG,
		"text/tab-separated-values": FormatGnuplot,
		"text/plain":                FormatAB,
	}
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
