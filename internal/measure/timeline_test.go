package measure

import (
	"encoding/base64"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// syntheticTimeline is n intervals of perSecond requests each, latencies
// log-normal around medianUs with spread sigma, each interval drawn afresh
// so no two are alike (as in a real run, and unlike copies, which deflate
// would store for nothing).
func syntheticTimeline(n, perInterval int, medianUs, sigma float64) *Timeline {
	rng := rand.New(rand.NewPCG(1, 2))
	tl := &Timeline{Start: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Interval: time.Second}
	h := NewIntervalHistogram()
	for range n {
		iv := Interval{Requests: int64(perInterval), Succeeded: int64(perInterval), Bytes: int64(perInterval) * 7800}
		iv.Requests += int64(rng.IntN(100))
		iv.Succeeded = iv.Requests
		iv.Bytes = iv.Requests * 7800
		h.Reset()
		for range iv.Requests {
			v := int64(medianUs * math.Exp(sigma*rng.NormFloat64()))
			_ = h.RecordValue(v)
			iv.Latency.Count++
			iv.Latency.Max = max(iv.Latency.Max, v)
		}
		iv.Latency.Set(h)
		tl.Intervals = append(tl.Intervals, iv)
	}
	return tl
}

// TestTimelineStoredSize: the stored timeline of a 10-minute run at 1 s
// (600 intervals, base64 in the stored measurement's JSON) stays under
// 64 KiB at 1 s for a loopback spread and a slow target, and a wide spread
// at 20 000 requests a second is kept under it by coarsening, exactly.
func TestTimelineStoredSize(t *testing.T) {
	for _, tt := range []struct {
		name            string
		perInterval     int
		medianUs, sigma float64
		interval        time.Duration // stored
	}{
		{"loopback 20k/s", 20000, 300, 0.3, time.Second},
		{"slow 500/s", 500, 50000, 0.5, time.Second},
		{"wide 20k/s", 20000, 2000, 0.8, 2 * time.Second},
	} {
		tl := syntheticTimeline(600, tt.perInterval, tt.medianUs, tt.sigma)
		raw, err := EncodeTimeline(tl)
		if err != nil {
			t.Fatal(err)
		}
		m := &Measurement{Timeline: tl}
		enc, err := EncodeMeasurement(m)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := DecodeMeasurement(enc)
		if err != nil {
			t.Fatal(err)
		}
		stored := base64.StdEncoding.EncodedLen(len(raw))
		kept := base64.StdEncoding.EncodedLen(len(mustEncode(t, dec.Timeline)))
		t.Logf("%s: 600 intervals of 1s encode in %d bytes as base64 (%.0f per interval); stored at %v in %d",
			tt.name, stored, float64(stored)/600, dec.Timeline.Interval, kept)
		if kept >= 64<<10 || dec.Timeline.Interval != tt.interval {
			t.Errorf("%s: stored at %v in %d bytes; want %v, < 64 KiB", tt.name, dec.Timeline.Interval, kept, tt.interval)
		}
		if got, want := dec.Timeline.Sum(), tl.Sum(); !equalInterval(got, want) {
			t.Errorf("%s: stored timeline sums to %+v, want %+v", tt.name, got, want)
		}
	}
}

func mustEncode(t *testing.T, tl *Timeline) []byte {
	t.Helper()
	b, err := EncodeTimeline(tl)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// equalInterval compares every field, the histogram bucket for bucket.
func equalInterval(a, b Interval) bool {
	la, lb := a.Latency, b.Latency
	if a.Requests != b.Requests || a.Succeeded != b.Succeeded || a.Failures != b.Failures || a.Non2xx != b.Non2xx ||
		a.Bytes != b.Bytes || a.Intended != b.Intended || a.Started != b.Started || a.Late != b.Late || a.MaxSendLag != b.MaxSendLag {
		return false
	}
	if la.Count != lb.Count || la.Max != lb.Max || la.Offset != lb.Offset || len(la.Counts) != len(lb.Counts) {
		return false
	}
	for i := range la.Counts {
		if la.Counts[i] != lb.Counts[i] {
			return false
		}
	}
	return true
}

// TestTimelineCodecRoundTrip: what EncodeTimeline writes decodes to the
// same timeline, every field and bucket, including failures, the open
// model's fields and empty intervals.
func TestTimelineCodecRoundTrip(t *testing.T) {
	tl := syntheticTimeline(5, 300, 800, 0.4)
	tl.Intervals[1].Failures = Failures{Connect: 3, Timeout: 1, Protocol: 2, Length: 4}
	tl.Intervals[1].Succeeded -= 7
	tl.Intervals[1].Non2xx = 3
	tl.Intervals[2] = Interval{}
	tl.Intervals[3].Intended, tl.Intervals[3].Started, tl.Intervals[3].Late, tl.Intervals[3].MaxSendLag = 100, 98, 5, 1800
	tl.Intervals[4].Latency.Max = 1 // smaller than before: a negative difference
	enc, err := EncodeTimeline(tl)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTimeline(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(tl.Start) || got.Interval != tl.Interval || len(got.Intervals) != len(tl.Intervals) {
		t.Fatalf("decoded %v, %v, %d intervals; want %v, %v, %d", got.Start, got.Interval, len(got.Intervals), tl.Start, tl.Interval, len(tl.Intervals))
	}
	for i := range tl.Intervals {
		if !equalInterval(got.Intervals[i], tl.Intervals[i]) {
			t.Errorf("interval %d = %+v, want %+v", i, got.Intervals[i], tl.Intervals[i])
		}
	}
}

// TestDecodeTimelineRefusesDamage: truncated or altered bytes give an
// error wrapping ErrBadEncoding or a timeline, never a panic.
func TestDecodeTimelineRefusesDamage(t *testing.T) {
	enc, err := EncodeTimeline(syntheticTimeline(20, 300, 800, 0.4))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeTimeline(enc[:len(enc)/2]); !errors.Is(err, ErrBadEncoding) {
		t.Errorf("truncated: err = %v, want ErrBadEncoding", err)
	}
	if _, err := DecodeTimeline([]byte("not deflate at all")); !errors.Is(err, ErrBadEncoding) {
		t.Errorf("garbage: err = %v, want ErrBadEncoding", err)
	}
	for i := range enc {
		bad := append([]byte(nil), enc...)
		bad[i] ^= 0x5a
		if _, err := DecodeTimeline(bad); err != nil && !errors.Is(err, ErrBadEncoding) {
			t.Fatalf("byte %d altered: err = %v, want ErrBadEncoding", i, err)
		}
	}
}

// TestTimelineMergeAligns: timelines of one origin merge interval by
// interval, the finer one coarsened to the coarser's interval first, and
// the merge's counts are the parts' sums.
func TestTimelineMergeAligns(t *testing.T) {
	fine := syntheticTimeline(8, 100, 500, 0.3)
	coarse := syntheticTimeline(3, 100, 5000, 0.3)
	coarse.Coarsen() // 2 intervals of 2 s
	var m Timeline
	m.Merge(fine)
	m.Merge(coarse)
	if m.Interval != 2*time.Second || len(m.Intervals) != 4 {
		t.Fatalf("merged: %d intervals of %v; want 4 of 2s", len(m.Intervals), m.Interval)
	}
	for i, iv := range m.Intervals {
		var want Interval // a copy of an interval would share its buckets
		want.Merge(&fine.Intervals[2*i])
		want.Merge(&fine.Intervals[2*i+1])
		if i < len(coarse.Intervals) {
			want.Merge(&coarse.Intervals[i])
		}
		if !equalInterval(iv, want) {
			t.Errorf("interval %d = %+v, want %+v", i, iv, want)
		}
	}
	sum, want := m.Sum(), fine.Sum()
	want.Merge(&Interval{Latency: coarse.Sum().Latency, Requests: coarse.Sum().Requests, Succeeded: coarse.Sum().Succeeded, Bytes: coarse.Sum().Bytes})
	if !equalInterval(sum, want) {
		t.Errorf("merged sum = %+v, want %+v", sum, want)
	}
	if fine.Interval != time.Second || len(fine.Intervals) != 8 {
		t.Errorf("merging changed its argument: %d intervals of %v", len(fine.Intervals), fine.Interval)
	}
}

// TestIntervalQuantiles: an interval's percentiles come from its
// histogram, within its resolution, and never pass its exact max.
func TestIntervalQuantiles(t *testing.T) {
	h := NewIntervalHistogram()
	var l Latency
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 100)
		l.Count++
		l.Max = v * 100
	}
	l.Set(h)
	got := l.Quantiles(0.5, 0.9, 0.99, 1)
	for i, want := range []int64{50_000, 90_000, 99_000, 100_000} {
		if d := math.Abs(float64(got[i]-want)) / float64(want); d > 0.07 || got[i] > l.Max {
			t.Errorf("quantile %d = %d µs, want %d ± 7 %%, at most %d", i, got[i], want, l.Max)
		}
	}
}

// TestMeasurementMergeTimelines: merged measurements merge their timelines;
// one without a timeline (stored before them) or with an empty one adds
// none, and what merges still encodes and decodes.
func TestMeasurementMergeTimelines(t *testing.T) {
	a := &Measurement{Timeline: syntheticTimeline(3, 50, 400, 0.3)}
	var m Measurement
	m.Merge(&Measurement{})
	m.Merge(&Measurement{Timeline: &Timeline{}})
	if m.Timeline != nil {
		t.Fatalf("merging measurements without a timeline made %+v", m.Timeline)
	}
	m.Merge(a)
	m.Merge(a)
	if m.Timeline == nil || len(m.Timeline.Intervals) != 3 || m.Timeline.Intervals[1].Requests != 2*a.Timeline.Intervals[1].Requests {
		t.Fatalf("merged timeline = %+v, want a's twice", m.Timeline)
	}
	enc, err := EncodeMeasurement(&m)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeMeasurement(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !equalInterval(dec.Timeline.Sum(), m.Timeline.Sum()) {
		t.Errorf("decoded timeline sums to %+v, want %+v", dec.Timeline.Sum(), m.Timeline.Sum())
	}
	if enc, err := EncodeMeasurement(&Measurement{Timeline: &Timeline{}}); err != nil {
		t.Fatal(err)
	} else if _, err := DecodeMeasurement(enc); err != nil {
		t.Errorf("a measurement with an empty timeline does not decode: %v", err)
	}
}

// TestPlanTimelineInterval: a plan's interval is zero (the default) or at
// least MinTimelineInterval, and the error names the field.
func TestPlanTimelineInterval(t *testing.T) {
	for _, tt := range []struct {
		interval time.Duration
		ok       bool
	}{{0, true}, {MinTimelineInterval, true}, {time.Second, true}, {MinTimelineInterval - 1, false}, {-time.Second, false}} {
		p := Plan{URLs: []string{"http://127.0.0.1:1/"}, Requests: 1, TimelineInterval: tt.interval}
		err := p.Validate()
		if (err == nil) != tt.ok || (err != nil && (!errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), "timeline_interval"))) {
			t.Errorf("Validate(TimelineInterval %v) = %v, want ok %v or an error naming timeline_interval", tt.interval, err, tt.ok)
		}
	}
}
