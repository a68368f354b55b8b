package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// fillCounts parses an SVG document and counts the elements filled with
// each colour. gonum's vgsvg draws every filled shape, bars included, as a
// <path> whose style holds "fill:#RRGGBB".
func fillCounts(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "path" {
			continue
		}
		for _, a := range el.Attr {
			if a.Name.Local != "style" {
				continue
			}
			for decl := range strings.SplitSeq(a.Value, ";") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(decl), "fill:"); ok {
					counts[strings.ToUpper(v)]++
				}
			}
		}
	}
}

func hex(i int) string {
	c := targetColor(i)
	return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
}

// TestSVGBars counts one bar per target per concurrency per slice: the
// fixture has 2 slices × 3 concurrency levels, so 6 bars per target, plus
// the target's legend swatch in each slice's bar chart.
func TestSVGBars(t *testing.T) {
	doc := render(t, FormatSVG)
	counts := fillCounts(t, doc)
	const slices, levels = 2, 3
	for i, target := range []string{"apache", "lighttpd"} {
		want := slices*levels + slices
		if got := counts[hex(i)]; got != want {
			t.Errorf("paths filled %s (%s) = %d, want %d (%d bars + %d legend swatches); all fills %v",
				hex(i), target, got, want, slices*levels, slices, counts)
		}
	}
	for _, text := range []string{"requests = 100", "requests = 1000", "c=50", "concurrency",
		"requests per second", "latency (ms)", "apache p99", "lighttpd p50"} {
		if !bytes.Contains(doc, []byte(text)) {
			t.Errorf("SVG lacks the text %q (titles, axis labels, legend)", text)
		}
	}
}

// TestSVGEmptyJob renders a job without runs as a valid document.
func TestSVGEmptyJob(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatSVG, fixtureJob(), nil, emptyAnalysis()); err != nil {
		t.Fatalf("Write(svg, no runs) = %v, want nil", err)
	}
	if counts := fillCounts(t, buf.Bytes()); counts[hex(0)] != 0 {
		t.Errorf("empty job draws %d bars, want 0", counts[hex(0)])
	}
	if !strings.Contains(buf.String(), "no runs yet") {
		t.Errorf("empty job's SVG does not say there are no runs")
	}
}

// TestSVGAllFailed draws a job whose every run failed (0 req/s, 0 ms):
// a flat chart, still one bar per target per concurrency.
func TestSVGAllFailed(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	for i := range a.Points {
		a.Points[i].RPS.Mean = 0
		a.Points[i].PercentilesMs = nil
	}
	var buf bytes.Buffer
	if err := Write(&buf, FormatSVG, j, runs, a); err != nil {
		t.Fatalf("Write(svg, all failed) = %v, want nil", err)
	}
	if got, want := fillCounts(t, buf.Bytes())[hex(1)], 8; got != want {
		t.Errorf("paths filled %s = %d, want %d", hex(1), got, want)
	}
}

// TestSVGClientMarks puts one mark over each client-bound bar, lighttpd at
// c = 100 in both slices, and explains it in those charts' titles.
func TestSVGClientMarks(t *testing.T) {
	doc := string(render(t, FormatSVG))
	if n := strings.Count(doc, ">"+clientMark+"</text>"); n != 2 {
		t.Errorf("SVG has %d client marks, want 2 (one bar per slice)", n)
	}
	if n := strings.Count(doc, clientMark+" load generator short of CPU: req/s measures the client"); n != 2 {
		t.Errorf("SVG explains the mark %d times, want in both bar charts' titles", n)
	}
}
