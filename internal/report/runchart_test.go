package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/html"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// measuredJob runs plan against url in-process, as a worker would run the
// job's one point, and returns the job with its one stored run.
func measuredJob(t *testing.T, url string, plan measure.Plan) (*job.Job, job.Run) {
	t.Helper()
	plan.URLs = []string{url}
	started := time.Now()
	m, err := loadgen.Run(context.Background(), plan)
	if err != nil {
		t.Fatalf("loadgen.Run: %v", err)
	}
	sweep := job.Sweep{Concurrency: []int{plan.Concurrency}, Repeats: 1}
	switch {
	case plan.Rate > 0:
		sweep.Rate, sweep.Duration = []float64{plan.Rate}, []job.Duration{job.Duration(plan.Duration)}
	case plan.Duration > 0:
		sweep.Duration = []job.Duration{job.Duration(plan.Duration)}
	default:
		sweep.Requests = []int{plan.Requests}
	}
	j := &job.Job{ID: "job_timeline", Spec: job.Spec{Name: "timeline", Targets: []job.Target{{Name: "target", URL: url}}, Sweep: sweep},
		Status: job.StatusSucceeded}
	run, err := job.NewRun(job.RunKey{}, "target", plan.Concurrency, started, time.Now(), m, abreport.Options{})
	if err != nil {
		t.Fatalf("job.NewRun: %v", err)
	}
	return j, *run
}

// drawRun renders one of run's charts as f.
func drawRun(t *testing.T, f Format, c Chart, j *job.Job, run job.Run) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteRunChart(&buf, f, c, j, run); err != nil {
		t.Fatalf("WriteRunChart(%s, %s) = %v, want nil", f, c, err)
	}
	return buf.Bytes()
}

// wellFormed checks doc parses as XML, and with xmllint where installed.
func wellFormed(t *testing.T, name string, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", name, err)
		}
	}
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Logf("xmllint not installed; encoding/xml alone checked %s", name)
		return
	}
	path := filepath.Join(t.TempDir(), name+".svg")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, "--noout", path).CombinedOutput(); err != nil {
		t.Errorf("xmllint --noout %s: %v\n%s", name, err, out)
	}
}

// strokedPaths returns the points of every <path> stroked in colour c
// ("#RRGGBB"; gonum's vgsvg draws a line as one path "M x y L x y …") left
// of the legend column, in document order. vgsvg draws in a group flipped
// upside down, so a path's y grows upwards: a higher value on a chart's
// axis has a larger y.
func strokedPaths(t *testing.T, doc []byte, c string) [][][2]float64 {
	t.Helper()
	var out [][][2]float64
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
		var d, style string
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "d":
				d = a.Value
			case "style":
				style = a.Value
			}
		}
		if !strings.Contains(strings.ToUpper(style), "STROKE:"+c+";") {
			continue
		}
		var pts [][2]float64
		legend := false
		f := strings.Fields(strings.NewReplacer("M", " ", "L", " ", "Z", " ", ",", " ").Replace(d))
		for i := 0; i+1 < len(f); i += 2 {
			x, errX := strconv.ParseFloat(f[i], 64)
			y, errY := strconv.ParseFloat(f[i+1], 64)
			if errX != nil || errY != nil {
				t.Fatalf("path %q: not a polyline of numbers", d)
			}
			pts = append(pts, [2]float64{x, y})
			legend = legend || x >= chartWidth-legendWidth
		}
		if !legend {
			out = append(out, pts)
		}
	}
}

func hexOf(c color.RGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

// onePath is the one path stroked in c, failing the test otherwise.
func onePath(t *testing.T, doc []byte, name string, c color.RGBA) [][2]float64 {
	t.Helper()
	paths := strokedPaths(t, doc, hexOf(c))
	if len(paths) != 1 {
		t.Fatalf("paths stroked %s (%s) = %d, want 1", hexOf(c), name, len(paths))
	}
	return paths[0]
}

// TestTimelineChartShowsSlowIntervals runs a target answering in 1 ms for
// 2 s, 20 ms for 2 s, then 1 ms again, and reads the drawn p50 line back
// out of the SVG: its points of the slow intervals (3, and 2 give or take
// one at the step's edges) stand well above those of intervals 0 and 5.
// The PNG of the same chart decodes at the chart's size.
func TestTimelineChartShowsSlowIntervals(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s run")
	}
	srv := testservers.StartSlowStretch(t)
	start := time.Now().Add(200 * time.Millisecond)
	srv.Begin(start)
	j, run := measuredJob(t, srv.URL+"/", measure.Plan{Concurrency: 2, KeepAlive: true, Duration: 6 * time.Second, StartAt: start})
	doc := drawRun(t, FormatSVG, ChartTimeline, j, run)
	wellFormed(t, "timeline", doc)
	p50 := onePath(t, doc, "p50", p50Color())
	if len(p50) < 6 {
		t.Fatalf("p50 line has %d points, want one per interval, 6", len(p50))
	}
	// Half the latency panel's height: about 1.2 decades of its log axis
	// (1 ms to 20 ms is 1.3). A generous bound; the measured gap is logged.
	const gap = timelineLatencyHeight / 4
	fast := max(p50[0][1], p50[5][1])
	t.Logf("p50 points' heights: %v; slow interval 3 is %.0f px above the fast intervals 0 and 5", p50, p50[3][1]-fast)
	if p50[3][1]-fast < gap {
		t.Errorf("p50 of slow interval 3 drawn at y %.1f, fast intervals 0 and 5 at %.1f and %.1f: want it %d px above both",
			p50[3][1], p50[0][1], p50[5][1], gap)
	}
	slow := 0
	for _, pt := range p50[:6] {
		if pt[1]-fast >= gap {
			slow++
		}
	}
	if slow < 1 || slow > 3 {
		t.Errorf("%d of the first 6 p50 points drawn high, want 2 ± 1 (the 2 s slow step)", slow)
	}
	for _, c := range []color.RGBA{p90Color(), p99Color(), successColor(), errorColor()} {
		onePath(t, doc, "series", c)
	}
	if paths := strokedPaths(t, doc, hexOf(intendedColor())); len(paths) != 0 {
		t.Errorf("a closed-model run draws %d intended-rate lines, want none", len(paths))
	}

	img, err := png.Decode(bytes.NewReader(drawRun(t, FormatPNG, ChartTimeline, j, run)))
	if err != nil {
		t.Fatalf("timeline PNG does not decode: %v", err)
	}
	w, h := (&timelineChart{}).size()
	if b := img.Bounds(); b.Dx() != int(w) || b.Dy() != int(h) {
		t.Errorf("timeline PNG is %dx%d, want %vx%v", b.Dx(), b.Dy(), w, h)
	}
}

// TestTimelineChartDrawsErrorsApart runs a target that fails every other
// request with a 500: per interval the successes are half of what
// completed, and errors are a series of their own, drawn beside the
// successes at the same height rather than counted in them.
func TestTimelineChartDrawsErrorsApart(t *testing.T) {
	var n atomic.Int64
	url := testservers.StartFasthttp(t, func(c *fasthttp.RequestCtx) {
		time.Sleep(time.Millisecond)
		if n.Add(1)%2 == 0 {
			c.SetStatusCode(fasthttp.StatusInternalServerError)
		}
		c.SetBodyString("ok")
	})
	j, run := measuredJob(t, url+"/", measure.Plan{Concurrency: 2, KeepAlive: true, Duration: 2 * time.Second,
		AcceptVariableLength: true})
	m, err := run.DecodeMeasurement()
	if err != nil {
		t.Fatal(err)
	}
	s := newTimelineSeries(m, maxChartIntervals)
	if len(s.t) < 2 {
		t.Fatalf("%d intervals, want 2 or 3", len(s.t))
	}
	for i := range s.t {
		if math.IsNaN(s.succeeded[i]) {
			continue // a tail too short for a rate
		}
		iv := m.Timeline.Intervals[i]
		span := s.interval.Seconds()
		if i == len(s.t)-1 && s.lastCovered > 0 {
			span = s.lastCovered
		}
		done := float64(iv.Requests) / span
		if got := s.succeeded[i]; math.Abs(got-done/2) > done*0.05+1/span {
			t.Errorf("interval %d: succeeded %.1f/s of %.1f/s completed, want about half", i, got, done)
		}
		if got := s.errors[i]; math.Abs(got-done/2) > done*0.05+1/span {
			t.Errorf("interval %d: errors %.1f/s of %.1f/s completed, want about half", i, got, done)
		}
	}
	doc := drawRun(t, FormatSVG, ChartTimeline, j, run)
	wellFormed(t, "timeline", doc)
	ok, bad := onePath(t, doc, "succeeded/s", successColor()), onePath(t, doc, "errors/s", errorColor())
	rated := len(s.t)
	if s.shortTail {
		rated--
	}
	if len(ok) != rated || len(bad) != rated {
		t.Fatalf("lines of %d and %d points, want %d each (%d intervals, short tail %v)", len(ok), len(bad), rated, len(s.t), s.shortTail)
	}
	for i := range ok {
		// The same height, within 4 % of the rates panel.
		if d := math.Abs(ok[i][1] - bad[i][1]); d > timelineRatesHeight*0.04 {
			t.Errorf("interval %d: successes drawn at y %.1f, errors at %.1f; want the same height", i, ok[i][1], bad[i][1])
		}
	}
}

// TestOpenModelCharts: a run at a fixed rate draws its intended and
// achieved rates on the timeline, and both its latency distributions
// (from the intended start and from the actual one), each a line that
// never falls as the percentile rises, on an axis labelled in nines.
func TestOpenModelCharts(t *testing.T) {
	srv := testservers.StartTarget(t, "ok", time.Millisecond)
	j, run := measuredJob(t, srv.URL+"/", measure.Plan{Concurrency: 4, KeepAlive: true, Rate: 200, Duration: 1500 * time.Millisecond})
	doc := drawRun(t, FormatSVG, ChartTimeline, j, run)
	wellFormed(t, "timeline", doc)
	for _, c := range []color.RGBA{intendedColor(), achievedColor()} {
		onePath(t, doc, "open model rate", c)
	}
	doc = drawRun(t, FormatSVG, ChartDistribution, j, run)
	wellFormed(t, "distribution", doc)
	for i, name := range []string{"corrected", "uncorrected"} {
		line := onePath(t, doc, name, distributionStyle(i).Color.(color.RGBA))
		if len(line) < 10 {
			t.Errorf("%s distribution has %d points, want HdrHistogram's ticks (10 or more)", name, len(line))
		}
		for k := 1; k < len(line); k++ {
			if line[k][0] <= line[k-1][0] || line[k][1] < line[k-1][1]-0.01 {
				t.Errorf("%s distribution point %d %v after %v: want x rising and y never falling", name, k, line[k], line[k-1])
				break
			}
		}
	}
	for _, text := range []string{">0%<", ">90%<", ">99%<", ">uncorrected<", "from its actual start", "percentile (log scale"} {
		if !bytes.Contains(doc, []byte(text)) {
			t.Errorf("distribution SVG lacks %q", text)
		}
	}
	img, err := png.Decode(bytes.NewReader(drawRun(t, FormatPNG, ChartDistribution, j, run)))
	if err != nil {
		t.Fatalf("distribution PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != chartWidth || b.Dy() != distributionHeight {
		t.Errorf("distribution PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), chartWidth, distributionHeight)
	}
}

// TestTimelineRates: a run of a few ms, inside one interval, keeps its
// rate (over its whole span, the run's own); a run that ends a few ms
// into its last interval draws no rate there, where a handful of
// requests over a few ms would read as a rate that never happened.
func TestTimelineRates(t *testing.T) {
	srv := testservers.StartTarget(t, "ok", 0)
	_, run := measuredJob(t, srv.URL+"/", measure.Plan{Concurrency: 1, KeepAlive: true, Requests: 20})
	m, err := run.DecodeMeasurement()
	if err != nil {
		t.Fatal(err)
	}
	s := newTimelineSeries(m, maxChartIntervals)
	if len(s.t) != 1 || s.shortTail || !(s.succeeded[0] > 20) || s.lastCovered <= 0 {
		t.Errorf("a 20-request run: %d intervals, short tail %v, %v succeeded/s over %.4f s; want one interval and its rate over the run's span",
			len(s.t), s.shortTail, s.succeeded, s.lastCovered)
	}
	tail := &measure.Measurement{Started: m.Started, Elapsed: 2*time.Second + 10*time.Millisecond,
		Timeline: &measure.Timeline{Start: m.Started, Interval: time.Second, Intervals: []measure.Interval{{Requests: 100, Succeeded: 100}, {Requests: 100, Succeeded: 100}, {Requests: 2, Succeeded: 2}}}}
	s = newTimelineSeries(tail, maxChartIntervals)
	if !s.shortTail || !math.IsNaN(s.succeeded[2]) || s.succeeded[1] != 100 {
		t.Errorf("a run 10 ms into its third interval: short tail %v, succeeded/s %v; want 100, 100 and no rate", s.shortTail, s.succeeded)
	}
}

func TestNinesLabel(t *testing.T) {
	for d, want := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		if got := ninesLabel(d); got != want {
			t.Errorf("ninesLabel(%d) = %q, want %q", d, got, want)
		}
	}
}

// TestRunChartWithoutData: a run stored without a measurement (the
// fixture's, as runs stored before timelines) draws charts that say what
// is missing, as valid documents.
func TestRunChartWithoutData(t *testing.T) {
	j := fixtureJob()
	run := fixtureRuns(j)[0]
	for c, want := range map[Chart]string{ChartTimeline: "stored without a timeline", ChartDistribution: "stored without a latency histogram"} {
		doc := drawRun(t, FormatSVG, c, j, run)
		wellFormed(t, string(c), doc)
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("%s chart of a run without data lacks %q", c, want)
		}
	}
	var buf bytes.Buffer
	if err := WriteRunChart(&buf, FormatHTML, ChartTimeline, j, run); !errors.Is(err, ErrNotAnImage) {
		t.Errorf("WriteRunChart(html) = %v, want ErrNotAnImage", err)
	}
	if err := WriteRunChart(&buf, FormatSVG, ChartSweep, j, run); !errors.Is(err, ErrUnknownChart) {
		t.Errorf("WriteRunChart(sweep) = %v, want ErrUnknownChart (the sweep is the job's chart)", err)
	}
}

func TestParseChart(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Chart
		err  bool
	}{
		{"timeline", ChartTimeline, false},
		{" Distribution ", ChartDistribution, false},
		{"sweep", ChartSweep, false},
		{"pie", "", true},
		{"", "", true},
	} {
		got, err := ParseChart(tc.in)
		if got != tc.want || (err != nil) != tc.err || err != nil && !errors.Is(err, ErrUnknownChart) {
			t.Errorf("ParseChart(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseRunID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want job.RunKey
		ok   bool
	}{
		{"0:0", job.RunKey{}, true},
		{" 12:3 ", job.RunKey{Point: 12, Repeat: 3}, true},
		{"3", job.RunKey{}, false},
		{"a:b", job.RunKey{}, false},
		{"-1:0", job.RunKey{}, false},
		{"1:2:3", job.RunKey{}, false},
		{"", job.RunKey{}, false},
	} {
		if got, ok := ParseRunID(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("ParseRunID(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if tc.ok {
			if back, _ := ParseRunID(RunID(tc.want)); back != tc.want {
				t.Errorf("ParseRunID(RunID(%v)) = %v", tc.want, back)
			}
		}
	}
}

func TestSelectRun(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	one := runs[:1]
	for _, tc := range []struct {
		name string
		runs []job.Run
		id   string
		want job.RunKey
		err  *RunChoiceError // nil for none
	}{
		{"by id", runs, "3:1", job.RunKey{Point: 3, Repeat: 1}, nil},
		{"the only run", one, "", one[0].RunKey, nil},
		{"none named of many", runs, "", job.RunKey{}, &RunChoiceError{}},
		{"malformed", runs, "3", job.RunKey{}, &RunChoiceError{ID: "3", Malformed: true}},
		{"negative", runs, "-1:0", job.RunKey{}, &RunChoiceError{ID: "-1:0", Malformed: true}},
		{"not stored", runs, "99:0", job.RunKey{}, &RunChoiceError{ID: "99:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SelectRun(tc.runs, tc.id)
			if tc.err == nil {
				if err != nil || got.RunKey != tc.want {
					t.Fatalf("SelectRun(%q) = %v, %v; want %v", tc.id, got.RunKey, err, tc.want)
				}
				return
			}
			var ce *RunChoiceError
			if !errors.Is(err, ErrUnknownRun) || !errors.As(err, &ce) {
				t.Fatalf("SelectRun(%q) = %v; want a *RunChoiceError wrapping ErrUnknownRun", tc.id, err)
			}
			if ce.ID != tc.err.ID || ce.Malformed != tc.err.Malformed || len(ce.Stored) != len(tc.runs) || ce.Stored[0] != "0:0" {
				t.Errorf("SelectRun(%q) = %+v; want %+v with the %d stored runs' ids", tc.id, ce, tc.err, len(tc.runs))
			}
		})
	}
}

// TestHTMLReportRunCharts: the HTML report draws each run's timeline and
// distribution inline, unfolded for a job of few runs; a sweep of many
// runs has them folded, at most maxChartedRuns of them (every point's
// first repeat before any second), and says how many it left out, so the
// file stays bounded.
func TestHTMLReportRunCharts(t *testing.T) {
	srv := testservers.StartTarget(t, "ok", time.Millisecond)
	j, run := measuredJob(t, srv.URL+"/", measure.Plan{Concurrency: 2, KeepAlive: true, Duration: 1500 * time.Millisecond})
	htmlOf := func(j *job.Job, runs []job.Run) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := Write(&buf, FormatHTML, j, runs, job.Analysis{}); err != nil {
			t.Fatalf("Write(html) = %v", err)
		}
		return buf.Bytes()
	}
	repeat := func(j *job.Job, points, repeats int) (*job.Job, []job.Run) {
		k := *j
		k.Spec.Sweep.Concurrency = nil
		for c := range points {
			k.Spec.Sweep.Concurrency = append(k.Spec.Sweep.Concurrency, c+1)
		}
		k.Spec.Sweep.Repeats = repeats
		var runs []job.Run
		for p := range points {
			for r := range repeats {
				cp := run
				cp.RunKey, cp.Concurrency = job.RunKey{Point: p, Repeat: r}, p+1
				runs = append(runs, cp)
			}
		}
		return &k, runs
	}

	few, runs := repeat(j, 1, 2)
	doc := htmlOf(few, runs)
	nodes := parseHTML(t, doc)
	if got, want := countTag(nodes, "svg"), 1+2*2; got != want {
		t.Errorf("<svg> elements = %d, want %d: the sweep chart and two per run", got, want)
	}
	open := 0
	for _, e := range nodes {
		if e.Data == "details" && attr(e, "class") == "charts" {
			if _, ok := attrOK(e, "open"); ok {
				open++
			}
		}
	}
	if open != 2 {
		t.Errorf("unfolded run charts = %d, want 2 (a job of two runs)", open)
	}
	for _, text := range []string{"Runs over time", `aria-label="latency by percentile, target · c=1 · t=1.5s · repeat 2/2"`,
		"requests per second and latency percentiles over time"} {
		if !bytes.Contains(doc, []byte(text)) {
			t.Errorf("HTML lacks %q", text)
		}
	}

	many, runs := repeat(j, 15, 2)
	doc = htmlOf(many, runs)
	nodes = parseHTML(t, doc)
	if got, want := countTag(nodes, "svg"), 1+2*maxChartedRuns; got != want {
		t.Errorf("<svg> elements of a 30-run job = %d, want %d: the sweep chart and two for each of %d runs", got, want, maxChartedRuns)
	}
	var charted []string
	for _, e := range nodes {
		if e.Data == "details" && attr(e, "class") == "charts" {
			if _, ok := attrOK(e, "open"); ok {
				t.Errorf("a 30-run job's run charts are unfolded; want them folded")
			}
			for c := range e.Descendants() {
				if c.Type == html.TextNode && c.Parent.Data == "summary" {
					charted = append(charted, c.Data)
				}
			}
		}
	}
	for p := range 15 {
		name := fmt.Sprintf("target · c=%d · t=1.5s · repeat 1/2", p+1)
		if !slices.Contains(charted, name) {
			t.Errorf("point %d's first repeat is not charted (%q); charted: %q", p, name, charted)
		}
	}
	if !bytes.Contains(doc, []byte("6 more runs are not drawn here")) {
		t.Errorf("HTML does not say 6 runs were left undrawn")
	}
	// Bounded: 24 runs' two charts at ~15 KB each, the ab texts and the
	// rest; a generous bound, the measured size is logged.
	t.Logf("HTML report of 30 runs: %d bytes", len(doc))
	if len(doc) > 1<<20 {
		t.Errorf("HTML report of 30 runs is %d bytes, want under 1 MiB", len(doc))
	}
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}
