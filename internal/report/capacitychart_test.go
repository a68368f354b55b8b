package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchq/benchq/internal/job"
)

// searchedJob is the fixture with a search whose SLO has one latency
// objective and one that is not a latency; a is its analysis with each
// target's capacity and probes.
func searchedJob(t *testing.T, caps ...job.Capacity) (*job.Job, job.Analysis) {
	t.Helper()
	j, _, a := capacityAnalysis(t)
	j.Spec.Search = &job.Search{SLO: []string{"p99_ms < 50", "failed_ratio < 0.01"}, MinRate: 50, MaxRate: 20000}
	a.Capacity = caps
	return j, a
}

// probesAt makes a search's probes: at each rate, passed or not, the
// latencies a target below and above its capacity shows.
func probesAt(rates []float64, passed []bool) []job.CapacityProbe {
	out := make([]job.CapacityProbe, len(rates))
	for i, r := range rates {
		p := job.CapacityProbe{N: i, Rate: r, AchievedRate: r, Passed: passed[i], P50Ms: 2 + r/1000, P99Ms: 10 + r/200}
		if !p.Passed {
			p.P50Ms, p.P99Ms = 40, 180
		}
		out[i] = p
	}
	return out
}

// svgPath is one <path> of an SVG chart: its data and what it is filled
// and stroked with ("" for none).
type svgPath struct {
	d, fill, stroke string
	translucent     bool // filled with an opacity below 1
	pts             [][2]float64
}

// glyph says whether the path is a closed mark; circle that it has arcs.
func (p svgPath) glyph() bool  { return strings.HasSuffix(p.d, "Z") }
func (p svgPath) circle() bool { return strings.Contains(p.d, "A") }

// svgPaths reads every <path> left of the legend column. The points are
// its M and L coordinates (an arc's are left out); vgsvg draws in a
// group flipped upside down, so a path's y grows upwards.
func svgPaths(t *testing.T, doc []byte) []svgPath {
	t.Helper()
	var out []svgPath
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "path" {
			continue
		}
		var p svgPath
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "d":
				p.d = a.Value
			case "style":
				for decl := range strings.SplitSeq(a.Value, ";") {
					k, v, _ := strings.Cut(decl, ":")
					switch k {
					case "fill":
						p.fill = strings.ToUpper(v)
					case "stroke":
						p.stroke = strings.ToUpper(v)
					case "fill-opacity":
						p.translucent = v != "1"
					}
				}
			}
		}
		if p.fill == "NONE" {
			p.fill = ""
		}
		if p.fill == "" && p.stroke == "" {
			p.fill = "#000000" // SVG's default fill
		}
		legend := false
		for cmd := range strings.FieldsFuncSeq(p.d, func(r rune) bool { return r == 'M' || r == 'L' || r == 'A' || r == 'Z' }) {
			if strings.Contains(cmd, " ") { // an arc's radii, flags and end
				continue
			}
			x, errX := strconv.ParseFloat(strings.Split(cmd, ",")[0], 64)
			y, errY := strconv.ParseFloat(strings.Split(cmd, ",")[1], 64)
			if errX != nil || errY != nil {
				t.Fatalf("path %q: not numbers", p.d)
			}
			p.pts = append(p.pts, [2]float64{x, y})
			legend = legend || x >= chartWidth-legendWidth
		}
		if !legend {
			out = append(out, p)
		}
	}
}

// probeMarks counts the marks in colour c: met and missed p50 circles
// and p99 triangles.
type probeMarks struct{ metP50, metP99, missedP50, missedP99 int }

func countMarks(paths []svgPath, c string) probeMarks {
	var m probeMarks
	for _, p := range paths {
		switch {
		case !p.glyph() || p.translucent:
		case p.fill == c && p.circle():
			m.metP50++
		case p.fill == c:
			m.metP99++
		case p.stroke == c && p.circle():
			m.missedP50++
		case p.stroke == c:
			m.missedP99++
		}
	}
	return m
}

// wantMarks counts the marks the probes must draw.
func wantMarks(probes []job.CapacityProbe) probeMarks {
	var m probeMarks
	for _, p := range probes {
		if p.P50Ms <= 0 {
			continue
		}
		if p.Passed {
			m.metP50++
			m.metP99++
		} else {
			m.missedP50++
			m.missedP99++
		}
	}
	return m
}

// scalePos is where v lies on axis ax drawn from lo to hi (canvas
// points), computed here from the axis' range and scale, not read from
// gonum's transform.
func scalePos(t *testing.T, ax plot.Axis, lo, hi, v float64) float64 {
	t.Helper()
	var f float64
	switch ax.Scale.(type) {
	case plot.LogScale:
		f = (math.Log10(v) - math.Log10(ax.Min)) / (math.Log10(ax.Max) - math.Log10(ax.Min))
	case plot.LinearScale:
		f = (v - ax.Min) / (ax.Max - ax.Min)
	default:
		t.Fatalf("axis scale %T, want linear or log", ax.Scale)
	}
	return lo + f*(hi-lo)
}

// TestCapacityChart draws two targets' searches and reads the SVG back:
// the SLO's latency bound is one line at its height on the log latency
// axis (the failed_ratio objective named in the caption instead), each
// target's capacity a vertical line at its rate inside its shaded
// interval, and each probe one mark of the target's colour, filled where
// it met the SLO and hollow where it missed; a probe where nothing
// completed is a cross. Rates spanning more than ten times draw on a
// log rate axis, a narrower search on a linear one.
func TestCapacityChart(t *testing.T) {
	climb := []float64{50, 100, 200, 400, 800, 1600, 3200, 6400, 4800, 5600, 5200, 5200, 5600, 5600, 5200}
	climbed := []bool{true, true, true, true, true, true, true, false, true, false, true, true, false, false, true}
	narrow := []float64{400, 800, 1600, 1200, 1400, 1300, 1300, 1400}
	narrowed := []bool{true, true, false, true, false, true, true, false}
	for _, tc := range []struct {
		name string
		caps []job.Capacity
		log  bool
	}{
		{"two targets over a wide climb", []job.Capacity{
			{Target: "apache", Rate: 5400, CILow: 5200, CIHigh: 5600, Reason: "converged", Probes: probesAt(climb, climbed)},
			{Target: "lighttpd", Rate: 1350, CILow: 1300, CIHigh: 1400, Reason: "converged", Probes: probesAt(narrow, narrowed)},
		}, true},
		{"one target, a narrow search", []job.Capacity{
			{Target: "lighttpd", Rate: 1350, CILow: 1300, CIHigh: 1400, Reason: "converged", Probes: probesAt(narrow, narrowed)},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.log {
				// A probe where nothing completed.
				tc.caps[1].Probes = append(tc.caps[1].Probes, job.CapacityProbe{N: 8, Rate: 1600})
			}
			j, a := searchedJob(t, tc.caps...)
			var buf bytes.Buffer
			if err := WriteCapacityChart(&buf, FormatSVG, j, a); err != nil {
				t.Fatalf("WriteCapacityChart(svg) = %v", err)
			}
			doc := buf.Bytes()
			wellFormed(t, "capacity", doc)
			paths := svgPaths(t, doc)

			// Where the chart's data area is, to place the values.
			ch := newCapacityChart(j, a)
			p, _, err := ch.plot()
			if err != nil {
				t.Fatal(err)
			}
			if _, isLog := p.X.Scale.(plot.LogScale); isLog != tc.log {
				t.Errorf("rate axis log = %v, want %v", isLog, tc.log)
			}
			w, h := ch.size()
			data := p.DataCanvas(ch.panel(draw.New(vgsvg.New(w, h))))
			x := func(v float64) float64 {
				return scalePos(t, p.X, float64(data.Min.X), float64(data.Max.X), v)
			}
			y := func(v float64) float64 {
				return scalePos(t, p.Y, float64(data.Min.Y), float64(data.Max.Y), v)
			}

			var slo [][][2]float64
			for _, pa := range paths {
				if pa.stroke == hexOf(sloColor()) {
					slo = append(slo, pa.pts)
				}
			}
			if len(slo) != 1 || len(slo[0]) != 2 {
				t.Fatalf("SLO lines = %v, want one line (p99_ms < 50; failed_ratio is no latency)", slo)
			}
			want := y(50)
			for _, pt := range slo[0] {
				if math.Abs(pt[1]-want) > 0.5 {
					t.Errorf("SLO line at y %.2f, want %.2f: 50 ms on the latency axis [%g, %g]", pt[1], want, p.Y.Min, p.Y.Max)
				}
			}
			if !bytes.Contains(doc, []byte("SLO p99_ms &lt; 50")) || !bytes.Contains(doc, []byte("not on this axis: failed_ratio &lt; 0.01.")) {
				t.Error("the SLO line's label or the caption naming failed_ratio is missing")
			}

			for _, c := range tc.caps {
				col := hexOf(targetColor(slicesIndex(j, c.Target)))
				var knee, band []svgPath
				for _, pa := range paths {
					switch {
					case pa.stroke == col && len(pa.pts) == 2 && pa.pts[0][0] == pa.pts[1][0]:
						knee = append(knee, pa)
					case pa.translucent && nearColor(pa.fill, targetColor(slicesIndex(j, c.Target))):
						band = append(band, pa)
					}
				}
				if len(knee) != 1 {
					t.Fatalf("%s: %d vertical lines in its colour, want the capacity's one", c.Target, len(knee))
				}
				if got := knee[0].pts[0][0]; math.Abs(got-x(c.Rate)) > 0.5 {
					t.Errorf("%s: capacity line at x %.2f, want %.2f (%g req/s)", c.Target, got, x(c.Rate), c.Rate)
				}
				if len(band) != 1 {
					t.Fatalf("%s: %d shaded intervals, want 1", c.Target, len(band))
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, pt := range band[0].pts {
					lo, hi = min(lo, pt[0]), max(hi, pt[0])
				}
				if math.Abs(lo-x(c.CILow)) > 0.5 || math.Abs(hi-x(c.CIHigh)) > 0.5 {
					t.Errorf("%s: interval shaded over x [%.2f, %.2f], want [%.2f, %.2f]", c.Target, lo, hi, x(c.CILow), x(c.CIHigh))
				}
				if got, want := countMarks(paths, col), wantMarks(c.Probes); got != want {
					t.Errorf("%s: marks %+v, want %+v", c.Target, got, want)
				}
			}
			crosses := 0
			for _, pa := range paths {
				if pa.stroke == hexOf(errorColor()) {
					crosses++
				}
			}
			if want := map[bool]int{true: 2, false: 0}[tc.log]; crosses != want {
				t.Errorf("strokes of the no-response cross = %d, want %d", crosses, want)
			}

			img, err := png.Decode(bytes.NewReader(func() []byte {
				var b bytes.Buffer
				if err := WriteCapacityChart(&b, FormatPNG, j, a); err != nil {
					t.Fatalf("WriteCapacityChart(png) = %v", err)
				}
				return b.Bytes()
			}()))
			if err != nil {
				t.Fatalf("capacity PNG does not decode: %v", err)
			}
			if b := img.Bounds(); b.Dx() != int(w) || b.Dy() != int(h) {
				t.Errorf("capacity PNG is %dx%d, want %vx%v", b.Dx(), b.Dy(), w, h)
			}
		})
	}
}

// nearColor says whether hex ("#RRGGBB") is c give or take one in each
// channel: vgsvg writes a translucent colour un-premultiplied, rounding
// down.
func nearColor(hex string, c color.RGBA) bool {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil || len(hex) != 7 {
		return false
	}
	for i, want := range []uint8{c.R, c.G, c.B} {
		got := int(v>>(16-8*i)) & 0xff
		if got < int(want)-1 || got > int(want)+1 {
			return false
		}
	}
	return true
}

func slicesIndex(j *job.Job, target string) int {
	for i, tg := range j.Spec.Targets {
		if tg.Name == target {
			return i
		}
	}
	return -1
}

// TestCapacityChartWithoutSearch: a job without a search, or whose search
// has no probe yet, draws a chart that says so; a format that is no image
// is refused.
func TestCapacityChartWithoutSearch(t *testing.T) {
	j, _, a := capacityAnalysis(t)
	a.Capacity = nil
	for _, tc := range []struct {
		search *job.Search
		want   string
	}{
		{nil, "ran no capacity search"},
		{&job.Search{SLO: []string{"p99_ms < 50"}, MinRate: 50, MaxRate: 500}, "has run no probe yet"},
	} {
		j.Spec.Search = tc.search
		var buf bytes.Buffer
		if err := WriteCapacityChart(&buf, FormatSVG, j, a); err != nil {
			t.Fatalf("WriteCapacityChart = %v", err)
		}
		wellFormed(t, "capacity", buf.Bytes())
		if !bytes.Contains(buf.Bytes(), []byte(tc.want)) {
			t.Errorf("capacity chart of search %v lacks %q", tc.search, tc.want)
		}
	}
	if err := WriteCapacityChart(io.Discard, FormatHTML, j, a); !errors.Is(err, ErrNotAnImage) {
		t.Errorf("WriteCapacityChart(html) = %v, want ErrNotAnImage", err)
	}
}
