package measure

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"errors"
	"io"
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
// 64 KiB at 1 s for a loopback spread and a slow target as recorded; a wide
// spread at 20 000 requests a second stays at 1 s with its latency
// coarsened, and a far wider one at 60 000 is coarsened in time as well; what
// is stored is the timeline coarsened, exactly.
func TestTimelineStoredSize(t *testing.T) {
	for _, tt := range []struct {
		name            string
		perInterval     int
		medianUs, sigma float64
		interval        time.Duration // stored
		level           int           // stored latency level
	}{
		{"loopback 20k/s", 20000, 300, 0.3, time.Second, 0},
		{"slow 500/s", 500, 50000, 0.5, time.Second, 0},
		{"wide 20k/s", 20000, 2000, 0.8, time.Second, 1},
		{"wider 60k/s", 60000, 2000, 1.2, time.Second, 2},
		{"widest 60k/s", 60000, 2000, 2.5, 2 * time.Second, MaxLatencyLevel},
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
		t.Logf("%s: 600 intervals of 1s encode in %d bytes as base64 (%.0f per interval); stored at %v, latency level %d, in %d",
			tt.name, stored, float64(stored)/600, dec.Timeline.Interval, dec.Timeline.LatencyLevel, kept)
		if kept >= 64<<10 || dec.Timeline.Interval != tt.interval || dec.Timeline.LatencyLevel != tt.level {
			t.Errorf("%s: stored at %v, latency level %d, in %d bytes; want %v, level %d, < 64 KiB",
				tt.name, dec.Timeline.Interval, dec.Timeline.LatencyLevel, kept, tt.interval, tt.level)
		}
		want := tl.Clone()
		for want.LatencyLevel < dec.Timeline.LatencyLevel {
			want.CoarsenLatency()
		}
		for want.Interval < dec.Timeline.Interval {
			want.Coarsen()
		}
		if len(want.Intervals) != len(dec.Timeline.Intervals) {
			t.Fatalf("%s: stored %d intervals, want %d", tt.name, len(dec.Timeline.Intervals), len(want.Intervals))
		}
		for i := range want.Intervals {
			if !equalInterval(dec.Timeline.Intervals[i], want.Intervals[i]) {
				t.Fatalf("%s: stored interval %d is %+v, want %+v", tt.name, i, dec.Timeline.Intervals[i], want.Intervals[i])
			}
		}
		if got, want := dec.Timeline.Sum(), want.Sum(); !equalInterval(got, want) {
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
		a.Bytes != b.Bytes || a.Intended != b.Intended || a.Started != b.Started || a.Late != b.Late || a.MaxSendLag != b.MaxSendLag ||
		a.Concurrency != b.Concurrency {
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
	// A concurrency ramp's intervals.
	tl.Intervals[0].Concurrency, tl.Intervals[1].Concurrency, tl.Intervals[4].Concurrency = 3, 8, 2
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

// TestCoarsenLatency: each level keeps every count and the exact count and
// max, and a percentile read from it is never below the recorded one and
// at most one coarse bucket (12.5 % at level 1, 25 % at level 2) above it.
func TestCoarsenLatency(t *testing.T) {
	tl := syntheticTimeline(4, 5000, 2000, 1.0)
	qs := []float64{0.5, 0.9, 0.99, 0.999}
	fine := make([][]int64, len(tl.Intervals))
	for i := range tl.Intervals {
		fine[i] = tl.Intervals[i].Latency.Quantiles(qs...)
	}
	for level := 1; level <= MaxLatencyLevel; level++ {
		tl.CoarsenLatency()
		// What a reader is told (latency_error_pct) is what holds.
		bound := 1 + tl.LatencyErrorPct()/100
		if want := math.Ldexp(6.25, level); tl.LatencyErrorPct() != want {
			t.Errorf("level %d: LatencyErrorPct = %g, want %g", level, tl.LatencyErrorPct(), want)
		}
		for i := range tl.Intervals {
			l := &tl.Intervals[i].Latency
			var sum int64
			for _, n := range l.Counts {
				sum += n
			}
			if sum != l.Count || !l.atLevel(1<<level) {
				t.Fatalf("level %d interval %d: buckets hold %d of %d, aligned %v", level, i, sum, l.Count, l.atLevel(1<<level))
			}
			for k, got := range l.Quantiles(qs...) {
				if want := fine[i][k]; got < want || float64(got) > float64(want)*bound {
					t.Errorf("level %d interval %d: p%g = %d µs, recorded %d µs (bound ×%.3f)", level, i, qs[k]*100, got, want, bound)
				}
			}
		}
	}
}

// TestTimelineMergeLatencyLevels: a timeline merged with one stored at a
// coarser latency level is coarsened to it first, and the merge is exact:
// the same as merging the two coarsened.
func TestTimelineMergeLatencyLevels(t *testing.T) {
	a, b := syntheticTimeline(6, 3000, 800, 0.6), syntheticTimeline(6, 2000, 1500, 0.9)
	coarse := b.Clone()
	coarse.CoarsenLatency()
	got := a.Clone()
	got.Merge(coarse)
	want := a.Clone()
	want.CoarsenLatency()
	want.Merge(coarse)
	if got.LatencyLevel != 1 || len(got.Intervals) != len(want.Intervals) {
		t.Fatalf("merged at level %d with %d intervals, want 1 and %d", got.LatencyLevel, len(got.Intervals), len(want.Intervals))
	}
	for i := range want.Intervals {
		if !equalInterval(got.Intervals[i], want.Intervals[i]) {
			t.Errorf("interval %d: %+v, want %+v", i, got.Intervals[i], want.Intervals[i])
		}
	}
	// The other way round: the coarse one is not changed by merging a finer one into it.
	into := coarse.Clone()
	into.Merge(a)
	if into.LatencyLevel != 1 || !equalInterval(into.Intervals[0], want.Intervals[0]) {
		t.Errorf("coarse ← fine: level %d, interval 0 %+v, want %+v", into.LatencyLevel, into.Intervals[0], want.Intervals[0])
	}
	if a.LatencyLevel != 0 || !a.Intervals[0].Latency.atLevel(1) {
		t.Error("merging changed the finer timeline it read from")
	}
}

// TestTimelineCodecLatencyLevels: a timeline at each latency level decodes
// to itself, and a version 1 encoding (before levels) still decodes.
func TestTimelineCodecLatencyLevels(t *testing.T) {
	tl := syntheticTimeline(5, 4000, 1200, 0.7)
	tl.Intervals[2] = Interval{} // an empty interval between full ones
	for level := 0; level <= MaxLatencyLevel; level++ {
		if level > 0 {
			tl.CoarsenLatency()
		}
		dec, err := DecodeTimeline(mustEncode(t, tl))
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		if dec.LatencyLevel != level || len(dec.Intervals) != len(tl.Intervals) {
			t.Fatalf("level %d: decoded level %d, %d intervals", level, dec.LatencyLevel, len(dec.Intervals))
		}
		for i := range tl.Intervals {
			if !equalInterval(dec.Intervals[i], tl.Intervals[i]) {
				t.Errorf("level %d interval %d: %+v, want %+v", level, i, dec.Intervals[i], tl.Intervals[i])
			}
		}
	}
	bad := tl.Clone()
	bad.Intervals[0].Latency.Counts[1]++ // a count between the level's buckets
	bad.Intervals[0].Latency.Count++
	if _, err := EncodeTimeline(bad); err == nil {
		t.Error("a latency finer than its timeline's level encoded without an error")
	}

	v1 := syntheticTimeline(3, 1000, 500, 0.5)
	dec, err := DecodeTimeline(versionOneEncoding(t, v1))
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	for i := range v1.Intervals {
		if !equalInterval(dec.Intervals[i], v1.Intervals[i]) {
			t.Errorf("version 1 interval %d: %+v, want %+v", i, dec.Intervals[i], v1.Intervals[i])
		}
	}
}

// versionOneEncoding writes tl (at latency level 0) as version 1 did: the
// version 2 layout without the level after the interval count.
func versionOneEncoding(t *testing.T, tl *Timeline) []byte {
	t.Helper()
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(mustEncode(t, tl))))
	if err != nil {
		t.Fatal(err)
	}
	d := timelineReader{buf: raw[1:]}
	d.varint()
	d.uvarint()
	d.uvarint()
	head := len(raw) - len(d.buf)
	if d.buf[0] != 0 {
		t.Fatalf("level byte %d, want 0", d.buf[0])
	}
	old := append(append([]byte{1}, raw[1:head]...), raw[head+1:]...)
	var out bytes.Buffer
	zw, _ := flate.NewWriter(&out, flate.BestCompression)
	if _, err := zw.Write(old); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// FuzzDecodeTimeline: no stored blob makes DecodeTimeline panic, and what
// it accepts encodes again and decodes to the same timeline.
func FuzzDecodeTimeline(f *testing.F) {
	tl := syntheticTimeline(3, 200, 900, 0.8)
	for level := 0; level <= MaxLatencyLevel; level++ {
		if level > 0 {
			tl.CoarsenLatency()
		}
		b, err := EncodeTimeline(tl)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := DecodeTimeline(data)
		if err != nil || dec == nil {
			return
		}
		again, err := DecodeTimeline(mustEncode(t, dec))
		if err != nil {
			t.Fatalf("re-encoded timeline does not decode: %v", err)
		}
		if len(again.Intervals) != len(dec.Intervals) || again.LatencyLevel != dec.LatencyLevel {
			t.Fatalf("round trip: %d intervals at level %d, want %d at %d", len(again.Intervals), again.LatencyLevel, len(dec.Intervals), dec.LatencyLevel)
		}
		for i := range dec.Intervals {
			if !equalInterval(again.Intervals[i], dec.Intervals[i]) {
				t.Fatalf("interval %d: %+v, want %+v", i, again.Intervals[i], dec.Intervals[i])
			}
		}
	})
}
