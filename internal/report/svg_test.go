package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
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

// TestSVGBars counts, per target, one bar, one p50 circle and one p99
// triangle per concurrency per slice: the fixture has 2 slices × 3
// concurrency levels, so 6 of each, plus the target's one legend swatch.
func TestSVGBars(t *testing.T) {
	doc := render(t, FormatSVG)
	counts := fillCounts(t, doc)
	const slices, levels = 2, 3
	for i, target := range []string{"apache", "lighttpd"} {
		want := 3*slices*levels + 1
		if got := counts[hex(i)]; got != want {
			t.Errorf("paths filled %s (%s) = %d, want %d (%d bars, circles and triangles + 1 legend swatch); all fills %v",
				hex(i), target, got, want, 3*slices*levels, counts)
		}
	}
	for _, text := range []string{"requests = 100", "requests = 1000", ">50<", ">100<", "concurrency (connections)",
		"throughput (req/s)", "latency (ms, log scale)", "p99 latency", "p50 latency", ">apache<", ">lighttpd<",
		"± 1 standard deviation over repeats"} {
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
	// 6 bars and the legend swatch; no latency point, a log axis has no zero.
	if got, want := fillCounts(t, buf.Bytes())[hex(1)], 7; got != want {
		t.Errorf("paths filled %s = %d, want %d", hex(1), got, want)
	}
	if !strings.Contains(buf.String(), "no latency measured") {
		t.Errorf("all-failed job's latency panel does not say no latency was measured")
	}
}

// TestSVGClientMarks puts one mark over each client-bound bar, lighttpd at
// c = 100 in both slices, and explains it once in the caption.
func TestSVGClientMarks(t *testing.T) {
	doc := string(render(t, FormatSVG))
	if n := strings.Count(doc, ">"+clientMark+"</text>"); n != 2 {
		t.Errorf("SVG has %d client marks, want 2 (one bar per slice)", n)
	}
	if n := strings.Count(doc, clientMark+" load generator short of CPU"); n != 1 {
		t.Errorf("SVG explains the mark %d times, want once in the caption", n)
	}
}

// oneLevel is the fixture cut to one concurrency level and one slice,
// seeds/001's shape: every target at c=50, n=100.
func oneLevel(repeats int) (*job.Job, []job.Run, job.Analysis) {
	j := fixtureJob()
	j.Spec.Sweep = job.Sweep{Concurrency: []int{50}, Requests: []int{100}, Repeats: repeats}
	runs := fixtureRuns(j)
	return j, runs, fixtureAnalysis(j, runs)
}

// errorBarPaths counts the strokes of error bars: three per bar (the
// whisker and its two caps), drawn in errorBarGrey.
func errorBarPaths(doc []byte) int {
	return bytes.Count(doc, []byte(fmt.Sprintf("stroke:#%02X%02X%02X", errorBarGrey, errorBarGrey, errorBarGrey)))
}

// TestSVGOneLevel: with a single concurrency level the latency panel is
// not empty (a line through one point draws nothing): each target gets
// its p50 circle and p99 triangle beside its bar; error bars appear over
// repeats and only then.
func TestSVGOneLevel(t *testing.T) {
	for _, tc := range []struct {
		repeats, errorBars int
		caption            string
	}{
		{1, 0, "no repeats, so no error bars"},
		{3, 2 * 3 * 3, "± 1 standard deviation over repeats"}, // 2 targets × (req/s, p50, p99) × 3 strokes
	} {
		t.Run(fmt.Sprintf("repeats=%d", tc.repeats), func(t *testing.T) {
			j, runs, a := oneLevel(tc.repeats)
			var buf bytes.Buffer
			if err := Write(&buf, FormatSVG, j, runs, a); err != nil {
				t.Fatal(err)
			}
			doc := buf.Bytes()
			counts := fillCounts(t, doc)
			for i := range 2 {
				// bar + legend swatch + p50 circle + p99 triangle
				if got := counts[hex(i)]; got != 4 {
					t.Errorf("paths filled %s = %d, want 4 (bar, swatch, p50 and p99 points)", hex(i), got)
				}
			}
			if got := errorBarPaths(doc); got != tc.errorBars {
				t.Errorf("error bar strokes = %d, want %d", got, tc.errorBars)
			}
			if !bytes.Contains(doc, []byte(tc.caption)) {
				t.Errorf("SVG lacks the caption %q", tc.caption)
			}
		})
	}
}

// TestSVGText checks what makes the chart readable where it is shown: it
// scales to its container by its 960-wide viewBox, names a sans-serif,
// and no text is smaller than 12 px of that viewBox.
func TestSVGText(t *testing.T) {
	doc := string(render(t, FormatSVG))
	if !strings.Contains(doc, `<svg width="100%" viewBox="0 0 960 `) {
		t.Errorf("SVG root is not width=100%% with a 960-wide viewBox: %.200s", doc)
	}
	if strings.Contains(doc, "Serif") || !strings.Contains(doc, "font-family:system-ui, sans-serif;") {
		t.Errorf("SVG text is not in system-ui, sans-serif")
	}
	sizes := regexp.MustCompile(`font-size:([0-9.]+)px`).FindAllStringSubmatch(doc, -1)
	if len(sizes) == 0 {
		t.Fatal("SVG has no font sizes")
	}
	for _, m := range sizes {
		if v, _ := strconv.ParseFloat(m[1], 64); v < 12 {
			t.Errorf("text at %s px, want at least 12", m[1])
		}
	}
	// The fixture's latency runs from about 45 to 250 ms: the axis runs
	// 20..500 (50 and 100 are concurrency ticks too, so not asserted here).
	for _, tick := range []string{">20<", ">200<", ">500<"} {
		if !strings.Contains(doc, tick) {
			t.Errorf("latency axis lacks the tick %s", tick)
		}
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{20, 500, []float64{20, 50, 100, 200, 500}},
		{0.5, 2, []float64{0.5, 1, 2}},
		{1, 10, []float64{1, 2, 5, 10}},
		{logFloor(0.37), logCeil(13), []float64{0.2, 0.5, 1, 2, 5, 10, 20}},
	} {
		var got []float64
		for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Value)
			if tk.Label != strconv.FormatFloat(tk.Value, 'g', -1, 64) {
				t.Errorf("tick %v labelled %q", tk.Value, tk.Label)
			}
		}
		if !slices.EqualFunc(got, tc.want, func(x, y float64) bool { return math.Abs(x-y) < 1e-9*y }) {
			t.Errorf("Ticks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestPNG decodes the PNG chart: the SVG's 960-wide canvas, one pixel a
// point, on white.
func TestPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(render(t, FormatPNG)))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != chartWidth || b.Dy() != int(chartHeight(newGrid(fixtureAnalysis(fixtureJob(), fixtureRuns(fixtureJob()))))) {
		t.Errorf("PNG is %dx%d, want %d wide and as tall as the SVG", b.Dx(), b.Dy(), chartWidth)
	}
	if r, g, bl, _ := img.At(1, 1).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
		t.Errorf("PNG corner is not white")
	}
}

// TestCompareSVG draws a job and its baseline in one chart: each target
// twice, on one throughput axis.
func TestCompareSVG(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	base := fixtureJob()
	base.ID, base.Spec.Name = "job_base", "last week"
	var sb strings.Builder
	if err := WriteCompareSVG(&sb, j, base, a, fixtureAnalysis(base, runs)); err != nil {
		t.Fatal(err)
	}
	svg := sb.String()
	for _, want := range []string{"apache vs lighttpd, 25 KB image against last week", "apache (this job)", "apache (baseline)",
		"lighttpd (this job)", "lighttpd (baseline)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("compare chart lacks %q", want)
		}
	}
	if n := strings.Count(svg, "mean successful throughput"); n != 2 {
		t.Errorf("compare chart has %d throughput panels, want one per slice (2)", n)
	}
}

// TestSVGMarksNoisyCells marks a bar whose req/s varied by more than
// analysis.NoisyCV over its repeats, with the legend under the chart.
func TestSVGMarksNoisyCells(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	var sb strings.Builder
	if err := Write(&sb, FormatSVG, j, runs, a); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sb.String(), noisyMark) {
		t.Fatal("a chart without noisy cells carries the noisy mark")
	}
	a.Points[0].Noisy = true
	sb.Reset()
	if err := Write(&sb, FormatSVG, j, runs, a); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sb.String(), noisyMark); n != 2 {
		t.Errorf("noisy marks = %d, want 2: the bar's and the legend's", n)
	}
}
