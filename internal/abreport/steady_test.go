package abreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// steppedRun is a 20 s run of one-second intervals, 100 requests each,
// whose latency is 1 ms, or 20 ms in intervals [slowFrom, slowTo); its
// first warmup seconds are a warm-up before the measured window.
func steppedRun(t *testing.T, slowFrom, slowTo int, warmup time.Duration) *measure.Measurement {
	t.Helper()
	m := &measure.Measurement{Started: started().Add(warmup), Elapsed: 20*time.Second - warmup, Warmup: warmup, Concurrency: 1}
	m.Timeline = &measure.Timeline{Start: started(), Interval: time.Second}
	var all []int64
	for i := range 20 {
		lat := int64(1000)
		if i >= slowFrom && i < slowTo {
			lat = 20000
		}
		h := measure.NewIntervalHistogram()
		iv := measure.Interval{Requests: 100, Succeeded: 100}
		for k := range int64(100) {
			v := lat + k // a spread within the histogram's resolution
			_ = h.RecordValue(v)
			iv.Latency.Max = max(iv.Latency.Max, v)
			if time.Duration(i)*time.Second >= warmup {
				all = append(all, v)
			}
		}
		iv.Latency.Count = 100
		iv.Latency.Set(h)
		m.Timeline.Intervals = append(m.Timeline.Intervals, iv)
	}
	withRequests(t, m, totals(all...), false)
	return m
}

// TestReportUnsteady: a run whose latency stepped from 1 to 20 ms for a
// stretch is marked in its result with the reason, and its ab text ends
// with the note; a steady one is not, and its text is ab's.
func TestReportUnsteady(t *testing.T) {
	r := FromMeasurement(steppedRun(t, 8, 14, 0), Options{})
	if !r.Unsteady || !strings.Contains(r.UnsteadyReason, "p50 rose") || !strings.Contains(r.UnsteadyReason, "between 8 s and 14 s") {
		t.Fatalf("stepped run: unsteady %v, reason %q; want a p50 rise between 8 s and 14 s", r.Unsteady, r.UnsteadyReason)
	}
	text := render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) })
	if want := "NOTE: the run was unsteady (" + r.UnsteadyReason + ")"; !strings.Contains(string(text), want) {
		t.Errorf("ab text of an unsteady run lacks %q:\n%s", want, text)
	}
	steady := FromMeasurement(steppedRun(t, 0, 0, 0), Options{})
	if steady.Unsteady || steady.UnsteadyReason != "" {
		t.Errorf("steady run: unsteady %v, reason %q; want neither", steady.Unsteady, steady.UnsteadyReason)
	}
	if text := render(t, func(b *bytes.Buffer) error { return WriteAB(b, steady, TextOptions{}) }); bytes.Contains(text, []byte("NOTE:")) {
		t.Errorf("ab text of a steady run has a note:\n%s", text)
	}
}

// TestTimelineOfMarksTheWarmup: the intervals before the measured window
// are marked, and a slow warm-up does not make the run unsteady.
func TestTimelineOfMarksTheWarmup(t *testing.T) {
	m := steppedRun(t, 0, 5, 5*time.Second)
	pts := TimelineOf(m)
	for i, p := range pts {
		if p.Warmup != (i < 5) {
			t.Errorf("interval %d: warmup %v, want %v", i, p.Warmup, i < 5)
		}
	}
	if r := FromMeasurement(m, Options{}); r.Unsteady {
		t.Errorf("a run slow in its warm-up only is unsteady: %s", r.UnsteadyReason)
	}
	var b bytes.Buffer
	if err := WriteTimelineNDJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b.Bytes(), []byte(`"warmup":true`)); n != 5 {
		t.Errorf("NDJSON marks %d intervals as warm-up, want 5", n)
	}
}
