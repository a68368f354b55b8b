package loadgen

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestProfileOffsetInvertsTheIntegral checks the schedule's exactness:
// start n is due where the rate's integral reaches n, on straight ramps,
// ramps from zero, ramps down, jumps and flat stages.
func TestProfileOffsetInvertsTheIntegral(t *testing.T) {
	s := func(d time.Duration, r float64) measure.Stage { return measure.Stage{Duration: d, Rate: r} }
	cases := []struct {
		name   string
		start  float64
		stages []measure.Stage
	}{
		{"up", 100, []measure.Stage{s(4*time.Second, 2000)}},
		{"from zero", 0, []measure.Stage{s(10*time.Second, 100), s(30*time.Second, 2000)}},
		{"down", 5000, []measure.Stage{s(2*time.Second, 100)}},
		{"jump and hold", 0, []measure.Stage{s(0, 300), s(time.Second, 300), s(time.Second, 50)}},
		{"pause", 100, []measure.Stage{s(time.Second, 0), s(time.Second, 0), s(time.Second, 100)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProfile(c.start, c.stages, true)
			end := measure.StagesDuration(c.stages).Seconds()
			total := p.due(end)
			for n := 0.0; n < total; n++ {
				at, ok := p.offset(n)
				if !ok || at < 0 || at > end+1e-9 {
					t.Fatalf("offset(%v) = %v, %v; want within 0..%v", n, at, ok, end)
				}
				if n > 0 {
					if got := p.due(at); math.Abs(got-n) > 1e-6*max(1, n) {
						t.Fatalf("due(offset(%v) = %v) = %v, want %v", n, at, got, n)
					}
				}
			}
		})
	}
}

func TestProfileIntegral(t *testing.T) {
	p := newProfile(100, []measure.Stage{{Duration: 4 * time.Second, Rate: 2000}}, true)
	// ∫₀ᵗ (100 + 475 s) ds = 100 t + 237.5 t²
	for _, tt := range []float64{0, 0.25, 1, 2.5, 4, 5} {
		want := 100*min(tt, 4) + 237.5*min(tt, 4)*min(tt, 4) + 2000*max(0, tt-4)
		if got := p.due(tt); math.Abs(got-want) > 1e-9 {
			t.Errorf("due(%v) = %v, want %v", tt, got, want)
		}
	}
}

func TestProfileActiveSpans(t *testing.T) {
	c := func(d time.Duration, n int) measure.Stage { return measure.Stage{Duration: d, Concurrency: n} }
	p := newProfile(0, []measure.Stage{c(time.Second, 10), c(time.Second, 10), c(time.Second, 0)}, false)
	cases := []struct {
		k          int
		from       float64
		start, end float64
		ok         bool
	}{
		{0, 0, 0.1, 2.9, true},
		{4, 0, 0.5, 2.5, true},
		{9, 0, 1, 2, true},
		{9, 1.5, 1.5, 2, true},
		{9, 2.5, 0, 0, false},
		{10, 0, 0, 0, false},
	}
	for _, tc := range cases {
		start, end, ok := p.active(tc.k, tc.from)
		if ok != tc.ok || math.Abs(start-tc.start) > 1e-9 || math.Abs(end-tc.end) > 1e-9 {
			t.Errorf("active(%d, %v) = %v, %v, %v; want %v, %v, %v", tc.k, tc.from, start, end, ok, tc.start, tc.end, tc.ok)
		}
	}
}

// TestRateRampTimeline ramps 100 → 2000 req/s over 4 s on a fast
// loopback target at 250 ms intervals: each interval's intended starts
// are the line's integral over it, within one for the rounding, and the
// achieved starts track them.
func TestRateRampTimeline(t *testing.T) {
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	m := run(t, measure.Plan{
		URLs: []string{url + "/"}, Concurrency: 64, KeepAlive: true,
		Rate: 100, Stages: []measure.Stage{{Duration: 4 * time.Second, Rate: 2000}},
		TimelineInterval: 250 * time.Millisecond,
	})
	checkTimelineSums(t, "ramp", m)
	tl := m.Timeline
	if len(tl.Intervals) < 16 {
		t.Fatalf("%d intervals, want 16 of 250ms", len(tl.Intervals))
	}
	line := func(s float64) float64 { return 100*s + 237.5*s*s } // ∫ 100 + 475 s
	lagAllowed := 100 * time.Millisecond
	if raceDetector {
		lagAllowed *= 4
	}
	var intended, started int64
	for i, iv := range tl.Intervals {
		from, to := float64(i)*0.25, float64(i+1)*0.25
		want := 0.0
		if from < 4 {
			want = line(min(to, 4)) - line(from)
		}
		if math.Abs(float64(iv.Intended)-want) > 1 {
			t.Errorf("interval %d: %d intended starts, want %.1f ± 1 (the ramp's integral)", i, iv.Intended, want)
		}
		intended += iv.Intended
		started += iv.Started
		// Achieved tracks intended: a start late in one interval is made
		// up in the next, so the running totals are compared, allowing
		// 100 ms of the rate's worth of lag (this machine is shared), 400
		// under the race detector.
		if slack := lagAllowed.Seconds() * (100 + 475*min(to, 4)); i < 16 && math.Abs(float64(started-intended)) > slack {
			t.Errorf("by interval %d's end %d started of %d intended, want within %.0f", i, started, intended, slack)
		}
		t.Logf("interval %2d: intended %4d (line %6.1f), started %4d, late %d, max lag %d µs", i, iv.Intended, want, iv.Started, iv.Late, iv.MaxSendLag)
	}
	if want := int64(math.Ceil(line(4))); intended != want {
		t.Errorf("%d intended starts in all, want %d", intended, want)
	}
	if r := m.Open.RequestedRate; math.Abs(r-1050) > 1 {
		t.Errorf("requested rate %v, want the ramp's mean 1050", r)
	}
	if float64(started) < float64(intended)-lagAllowed.Seconds()*2000 || started != m.Complete+m.Failed {
		t.Errorf("%d started, the run completed %d and failed %d", started, m.Complete, m.Failed)
	}
}

// TestRateStagesTimeline runs k6-style stages, 0 → 400 req/s over 1 s,
// then 400 → 100 over 1 s: intended per interval follows both legs.
func TestRateStagesTimeline(t *testing.T) {
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	m := run(t, measure.Plan{
		URLs: []string{url + "/"}, Concurrency: 16, KeepAlive: true,
		Stages:           []measure.Stage{{Duration: time.Second, Rate: 400}, {Duration: time.Second, Rate: 100}},
		TimelineInterval: 250 * time.Millisecond,
	})
	checkTimelineSums(t, "stages", m)
	if m.Open == nil {
		t.Fatal("a rate-stage run is not in the open model")
	}
	// ∫ of 400 s for s < 1, then 200 + ∫₁ˢ (400 − 300 (u−1)) du.
	line := func(s float64) float64 {
		if s <= 1 {
			return 200 * s * s
		}
		u := s - 1
		return 200 + 400*u - 150*u*u
	}
	for i, iv := range m.Timeline.Intervals {
		from, to := float64(i)*0.25, float64(i+1)*0.25
		want := 0.0
		if from < 2 {
			want = line(min(to, 2)) - line(from)
		}
		if math.Abs(float64(iv.Intended)-want) > 1 {
			t.Errorf("interval %d: %d intended starts, want %.1f ± 1", i, iv.Intended, want)
		}
		t.Logf("interval %d: intended %d (line %.1f), started %d", i, iv.Intended, want, iv.Started)
	}
	if got, want := m.Complete+m.Failed, int64(line(2)); got < want-5 || got > want+1 {
		t.Errorf("%d requests ended, want about %d", got, want)
	}
}

// TestConcurrencyRamp ramps a closed model from 0 to 8 connections over
// 1.5 s, holds 0.5 s, then down to 2 over 0.5 s, against a target that
// holds every request 20 ms: each interval's completions follow the
// connections the ramp allowed (c / 20 ms), so connections were really
// added and removed, and the timeline says how many.
func TestConcurrencyRamp(t *testing.T) {
	const hold = 20 * time.Millisecond
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(hold)
		ctx.SetBodyString("ok")
	})
	c := func(d time.Duration, n int) measure.Stage { return measure.Stage{Duration: d, Concurrency: n} }
	m := run(t, measure.Plan{
		URLs: []string{url + "/"}, KeepAlive: true,
		Stages:           []measure.Stage{c(1500*time.Millisecond, 8), c(500*time.Millisecond, 8), c(500*time.Millisecond, 2)},
		TimelineInterval: 250 * time.Millisecond,
	})
	checkTimelineSums(t, "concurrency ramp", m)
	if m.Concurrency != 8 || m.MaxInFlight != 8 {
		t.Errorf("concurrency %d, max in flight %d; want 8 workers, 8 at most at once", m.Concurrency, m.MaxInFlight)
	}
	// The most the ramp allows in [from, to): its value just before to on the
	// way up (8·t/1.5 s, rounded down), at from on the way down.
	want := []int64{1, 2, 3, 5, 6, 7, 8, 8, 8, 5}
	tl := m.Timeline
	if len(tl.Intervals) < len(want) {
		t.Fatalf("%d intervals, want %d", len(tl.Intervals), len(want))
	}
	perConn := float64(250*time.Millisecond) / float64(hold) // ≈ 12 requests per connection and interval
	for i, iv := range tl.Intervals[:len(want)] {
		if iv.Concurrency != want[i] {
			t.Errorf("interval %d: concurrency %d, want %d", i, iv.Concurrency, want[i])
		}
		t.Logf("interval %d: concurrency %d, completed %d", i, iv.Concurrency, iv.Requests)
		if iv.Requests > int64(float64(iv.Concurrency)*perConn)+int64(iv.Concurrency) {
			t.Errorf("interval %d: %d completed, more than %d connections can at %v each", i, iv.Requests, iv.Concurrency, hold)
		}
	}
	mid, early, late := tl.Intervals[6].Requests, tl.Intervals[1].Requests, tl.Intervals[9].Requests
	if mid < 2*early || mid < int64(4*perConn) || late >= mid {
		t.Errorf("completions per interval: %d early, %d at the peak, %d ramping down; want the peak's at least twice the early's and 8 connections' worth", early, mid, late)
	}
}

func TestStagesValidation(t *testing.T) {
	r := func(d time.Duration, v float64) measure.Stage { return measure.Stage{Duration: d, Rate: v} }
	cases := []struct {
		name  string
		plan  measure.Plan
		field string
	}{
		{"no time", measure.Plan{Stages: []measure.Stage{r(0, 100)}}, "stages:"},
		{"negative", measure.Plan{Stages: []measure.Stage{r(-time.Second, 100), r(2*time.Second, 1)}}, "stages[0].duration"},
		{"all zero", measure.Plan{Stages: []measure.Stage{r(time.Second, 0)}}, "stages:"},
		{"mixed", measure.Plan{Stages: []measure.Stage{r(time.Second, 100), {Duration: time.Second, Concurrency: 3}}}, "stages[1].concurrency"},
		{"bad rate", measure.Plan{Stages: []measure.Stage{r(time.Second, math.NaN())}}, "stages[0].rate"},
		{"duration differs", measure.Plan{Duration: time.Second, Stages: []measure.Stage{r(2*time.Second, 100)}}, "duration:"},
		{"warmup", measure.Plan{Warmup: time.Second, Stages: []measure.Stage{r(2*time.Second, 100)}}, "warmup:"},
		{"h2", measure.Plan{HTTPVersion: measure.HTTP2, Stages: []measure.Stage{r(2*time.Second, 100)}}, "stages:"},
		{"too few workers", measure.Plan{Concurrency: 2, Stages: []measure.Stage{{Duration: time.Second, Concurrency: 5}}}, "concurrency:"},
		{"rate in a closed ramp", measure.Plan{Rate: 5, Stages: []measure.Stage{{Duration: time.Second, Concurrency: 5}}}, "rate:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.plan.URLs = []string{"http://127.0.0.1:1/"}
			err := c.plan.Validate()
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Errorf("Validate() = %v, want an error naming %q", err, c.field)
			}
		})
	}
	ok := measure.Plan{URLs: []string{"http://127.0.0.1:1/"}, Stages: []measure.Stage{r(time.Second, 100)}}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v, want nil", ok, err)
	}
	if d := ok.WithDefaults().Duration; d != time.Second {
		t.Errorf("WithDefaults().Duration = %v, want the stages' 1s", d)
	}
}

// TestRateRampCanceled checks a ramp stops on cancel like any run.
func TestRateRampCanceled(t *testing.T) {
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	m, err := Run(ctx, measure.Plan{URLs: []string{url + "/"}, Concurrency: 4, Stages: []measure.Stage{{Duration: time.Minute, Concurrency: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Canceled || time.Since(began) > 5*time.Second {
		t.Errorf("canceled %v after %v, want a cancel within a second of the context's end", m.Canceled, time.Since(began))
	}
}
