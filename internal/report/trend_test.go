package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// trendFixture is 11 jobs of two targets at c = 4, the last one 20 %
// slower on target a and failed.
func trendFixture() []analysis.TrendPoint {
	t0 := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	var out []analysis.TrendPoint
	for i := range 11 {
		v, verdict := 20+float64(i%3)/4, job.VerdictPass
		if i == 10 {
			v, verdict = 24.3, job.VerdictFail
		}
		id, at, commit := fmt.Sprintf("job%02d", i), t0.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("%07x0abcdef", i*0x1111)
		for k, target := range []string{"a", "b"} {
			out = append(out, analysis.TrendPoint{JobID: id, CreatedAt: at, Target: target, Concurrency: 4, Requests: 1000,
				Value: v + float64(k)*5, Stat: job.Stat{N: 3, Mean: v + float64(k)*5, SD: 0.4}, Verdict: verdict, Commit: commit, Branch: "main"})
		}
	}
	return out
}

func TestTrendSVGGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTrendSVG(&buf, "checkout-main: p99_ms of main", "p99_ms", trendFixture()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "trend.svg")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("WriteTrendSVG differs from %s; rerun with -update and review the diff", path)
	}
}

// TestTrendSVGDraws counts what a reader sees: per target one point per
// job (11) plus its legend swatch, one ring for the failed job per
// target plus the legend's, and the commits under the axis.
func TestTrendSVGDraws(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTrendSVG(&buf, "t", "p99_ms", trendFixture()); err != nil {
		t.Fatal(err)
	}
	doc := buf.Bytes()
	counts := fillCounts(t, doc)
	for i := range 2 {
		if got := counts[hex(i)]; got != 11+1 {
			t.Errorf("target %d: %d shapes filled with %s, want 11 points + 1 swatch", i, got, hex(i))
		}
	}
	for _, s := range []string{"a c=4 n=1000", "b c=4 n=1000", "verdict failed", "0000000", "000aaaa", `width="100%"`} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("SVG lacks %q", s)
		}
	}
	var empty bytes.Buffer
	if err := WriteTrendSVG(&empty, "t", "rps", nil); err != nil || !strings.Contains(empty.String(), "no finished jobs yet") {
		t.Errorf("empty series: %v, want a chart saying no finished jobs yet", err)
	}
}

// strokeCounts counts the SVG's paths per stroke colour.
func strokeCounts(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, el := range strings.Split(string(doc), "<path")[1:] {
		style, _, _ := strings.Cut(el, ">")
		for decl := range strings.SplitSeq(style, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(decl), "stroke:"); ok {
				counts[strings.ToUpper(v)]++
			}
		}
	}
	return counts
}

// TestTrendSVGMarksChangePoints: a change point to look at is a red dashed
// line with its magnitude, an acknowledged one a grey dotted line saying
// so, each named in the legend; one whose job is not in the series is
// left out.
func TestTrendSVGMarksChangePoints(t *testing.T) {
	marks := []job.ChangePoint{
		{ID: "cp_1", JobID: "job10", Magnitude: 0.2},
		{ID: "cp_2", JobID: "job04", Magnitude: -0.1, Acknowledged: true},
		{ID: "cp_3", JobID: "elsewhere", Magnitude: 0.99},
	}
	var buf bytes.Buffer
	if err := WriteTrendSVGMarked(&buf, "t", "p99_ms", trendFixture(), marks); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	for _, s := range []string{"change +20.0 %", "change -10.0 % (ack)", "change point", "change point, acknowledged"} {
		if !strings.Contains(doc, s) {
			t.Errorf("SVG lacks %q", s)
		}
	}
	if strings.Contains(doc, "+99.0") {
		t.Error("SVG marks a change point whose job is not in the series")
	}
	strokes := strokeCounts(t, buf.Bytes())
	if strokes["#C01F1F"] != 2 || strokes["#888888"] != 2 {
		t.Errorf("strokes = %v, want 2 red (mark, legend) and 2 grey (mark, legend)", strokes)
	}
	var plain bytes.Buffer
	if err := WriteTrendSVG(&plain, "t", "p99_ms", trendFixture()); err != nil || strings.Contains(plain.String(), "change point") {
		t.Errorf("unmarked chart: %v, want no change point in it", err)
	}
}
