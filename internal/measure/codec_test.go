package measure_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// measurementEqual compares measurements field by field, histograms by
// their every bucket, times by instant (decoding drops the monotonic
// clock reading) and without the raw samples, which are not encoded.
var measurementEqual = []cmp.Option{
	cmp.Comparer(func(a, b *hdrhistogram.Histogram) bool {
		if a == nil || b == nil {
			return a == b
		}
		sa, sb := a.Export(), b.Export()
		// The library reads a ratio of 0 as its default 1.
		for _, s := range []*hdrhistogram.Snapshot{sa, sb} {
			if s.IntegerToDoubleConversionRatio == 0 {
				s.IntegerToDoubleConversionRatio = 1
			}
		}
		return cmp.Equal(sa, sb)
	}),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmpopts.IgnoreFields(measure.Measurement{}, "Samples"),
}

// spread answers after a delay that cycles through 0..600 µs, and every
// seventh request with 503, so the phases have a spread to take quantiles
// of and the status codes more than one entry.
func spread() fasthttp.RequestHandler {
	var n atomic.Int64
	return func(ctx *fasthttp.RequestCtx) {
		i := n.Add(1)
		time.Sleep(time.Duration(i%7) * 100 * time.Microsecond)
		if i%7 == 0 {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		}
		ctx.SetBodyString("measured")
	}
}

func runPlan(t *testing.T, p measure.Plan) *measure.Measurement {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m, err := loadgen.Run(ctx, p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if m.Complete == 0 {
		t.Fatalf("Run completed no request: %+v", m.Failures)
	}
	return m
}

func roundTrip(t *testing.T, m *measure.Measurement) *measure.Measurement {
	t.Helper()
	b, err := measure.EncodeMeasurement(m)
	if err != nil {
		t.Fatalf("EncodeMeasurement: %v", err)
	}
	d, err := measure.DecodeMeasurement(b)
	if err != nil {
		t.Fatalf("DecodeMeasurement: %v", err)
	}
	return d
}

func TestMeasurementCodecRoundTrip(t *testing.T) {
	url := testservers.StartFasthttp(t, spread())
	tests := []struct {
		name string
		plan measure.Plan
	}{
		{"closed keep-alive", measure.Plan{Requests: 200, Concurrency: 4, KeepAlive: true}},
		{"closed a connection per request", measure.Plan{Requests: 100, Concurrency: 2}},
		{"open model", measure.Plan{Requests: 100, Concurrency: 4, Rate: 2000, KeepAlive: true}},
		{"HTTP/1.0 with a body", measure.Plan{Requests: 50, Concurrency: 2, HTTPVersion: measure.HTTP10, Body: []byte("payload")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plan
			p.URLs = []string{url + "/doc"}
			m := runPlan(t, p)
			got := roundTrip(t, m)
			if diff := cmp.Diff(m, got, measurementEqual...); diff != "" {
				t.Fatalf("decode(encode(m)) differs from m (-m +decoded):\n%s", diff)
			}
			if diff := cmp.Diff(abreport.FromMeasurement(m, abreport.Options{}), abreport.FromMeasurement(got, abreport.Options{})); diff != "" {
				t.Errorf("report of the decoded measurement differs (-m +decoded):\n%s", diff)
			}
			for _, ph := range []struct {
				name      string
				want, got *measure.Phase
			}{
				{"connect", &m.Connect, &got.Connect},
				{"processing", &m.Processing, &got.Processing},
				{"waiting", &m.Waiting, &got.Waiting},
				{"total", &m.Total, &got.Total},
			} {
				if ph.got.Hist == nil || ph.got.Count != m.Complete {
					t.Errorf("%s: decoded count %d (histogram %v), want %d with a histogram", ph.name, ph.got.Count, ph.got.Hist != nil, m.Complete)
				}
				for _, q := range []float64{0.5, 0.9, 0.99, 1} {
					if g, w := ph.got.Quantile(q), ph.want.Quantile(q); g != w {
						t.Errorf("%s: Quantile(%v) = %d after the round trip, %d before", ph.name, q, g, w)
					}
				}
				if ph.got.Mean() != ph.want.Mean() || ph.got.StdDev() != ph.want.StdDev() {
					t.Errorf("%s: mean/sd %v/%v after the round trip, %v/%v before", ph.name, ph.got.Mean(), ph.got.StdDev(), ph.want.Mean(), ph.want.StdDev())
				}
			}
		})
	}
}

// TestMergeOfDecodedShards runs one point as three shards with their raw
// samples kept: merging the decoded shards must equal merging the originals,
// and the merged percentiles must equal the ones computed from every shard's
// samples within the histograms' precision.
func TestMergeOfDecodedShards(t *testing.T) {
	url := testservers.StartFasthttp(t, spread())
	tests := []struct {
		name string
		plan measure.Plan
	}{
		{"closed keep-alive", measure.Plan{Requests: 300, Concurrency: 3, KeepAlive: true}},
		{"closed a connection per request", measure.Plan{Requests: 150, Concurrency: 2}},
		{"open model", measure.Plan{Requests: 150, Concurrency: 3, Rate: 3000, KeepAlive: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plan
			p.URLs = []string{url + "/"}
			p.RecordSamples = true
			var orig, dec measure.Measurement
			var samples []measure.Sample
			for range 3 {
				m := runPlan(t, p)
				samples = append(samples, m.Samples...)
				d := roundTrip(t, m)
				orig.Merge(m)
				dec.Merge(d)
			}
			if diff := cmp.Diff(&orig, &dec, measurementEqual...); diff != "" {
				t.Fatalf("merge of decoded shards differs from merge of the originals (-orig +decoded):\n%s", diff)
			}
			if diff := cmp.Diff(abreport.FromMeasurement(&orig, abreport.Options{}), abreport.FromMeasurement(&dec, abreport.Options{})); diff != "" {
				t.Errorf("report of the merged decoded shards differs (-orig +decoded):\n%s", diff)
			}
			if int64(len(samples)) != dec.Complete || dec.Total.Count != dec.Complete {
				t.Fatalf("merged %d completed, total count %d, %d samples", dec.Complete, dec.Total.Count, len(samples))
			}
			jobtest.CheckQuantiles(t, &dec, samples, 0.5, 0.75, 0.9, 0.95, 0.99, 1)
		})
	}
}

func TestDecodeMeasurementRefuses(t *testing.T) {
	valid, err := measure.EncodeMeasurement(seedMeasurement(t))
	if err != nil {
		t.Fatal(err)
	}
	otherRange := hdrhistogram.New(1, 1000, 2)
	_ = otherRange.RecordValue(5)
	enc, err := otherRange.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	one := hdrhistogram.New(1, 3_600_000_000, 3)
	_ = one.RecordValue(5)
	oneEnc, err := one.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
	}{
		{"not JSON", "{"},
		{"no version", `{"complete": 3}`},
		{"future version", `{"v": 2}`},
		{"negative count", `{"v": 1, "total": {"count": -1}}`},
		{"min above max", `{"v": 1, "total": {"count": 2, "min_us": 9, "max_us": 3}}`},
		{"histogram not base64", `{"v": 1, "total": {"count": 1, "hdr": "!!!"}}`},
		{"histogram of another range", `{"v": 1, "total": {"count": 1, "min_us": 5, "max_us": 5, "hdr": "` + string(enc) + `"}}`},
		{"histogram count disagrees", `{"v": 1, "total": {"count": 2, "min_us": 5, "max_us": 5, "hdr": "` + string(oneEnc) + `"}}`},
		{"valid but for one phase", string(valid[:len(valid)-1]) + `, "waiting": {"count": -3}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := measure.DecodeMeasurement([]byte(tt.in))
			if !errors.Is(err, measure.ErrBadEncoding) {
				t.Fatalf("DecodeMeasurement(%s) = %v, %v; want ErrBadEncoding", tt.in, m, err)
			}
		})
	}
	if m, err := measure.DecodeMeasurement([]byte("null")); m != nil || err != nil {
		t.Errorf("DecodeMeasurement(null) = %v, %v; want nil, nil", m, err)
	}
}

// seedMeasurement is a small measurement built by hand, every phase with a
// histogram consistent with its counts.
func seedMeasurement(t testing.TB) *measure.Measurement {
	phase := func(vals ...int64) measure.Phase {
		ph := measure.Phase{Hist: hdrhistogram.New(1, 3_600_000_000, 3)}
		for i, v := range vals {
			if err := ph.Hist.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			if i == 0 || v < ph.Min {
				ph.Min = v
			}
			ph.Max = max(ph.Max, v)
			ph.Count++
			ph.Sum += v
			ph.SumSq += float64(v * v)
		}
		return ph
	}
	return &measure.Measurement{
		ServerSoftware: "seed", ServerHostname: "127.0.0.1", ServerPort: 8080, DocumentPath: "/",
		Concurrency: 2, Method: "GET", Started: time.Unix(1_700_000_000, 5), Elapsed: 3 * time.Millisecond,
		Complete: 3, Failed: 1, Failures: measure.Failures{Timeout: 1}, StatusCodes: map[int]int64{200: 2, 503: 1},
		Non2xx: 1, TotalReceivedBytes: 300, BodyReceivedBytes: 30, TotalSentBytes: 120,
		Connect: phase(0, 10, 20), Processing: phase(100, 200, 300), Waiting: phase(90, 180, 270), Total: phase(100, 210, 320),
		ConnectToWrite: measure.Phase{Count: 1, Sum: 15, SumSq: 225, Min: 15, Max: 15},
		Open:           &measure.OpenModel{RequestedRate: 1000, AchievedRate: 999.5, LateStarts: 1, Uncorrected: phase(90, 200, 300), SendLag: phase(2, 15, 1300)},
		MaxInFlight:    2, ClientCPU: time.Millisecond, ClientCores: 2,
	}
}

// FuzzDecodeMeasurement feeds the decoder garbage: it must refuse or decode,
// never panic, and whatever it decodes must merge, report and encode again
// to the same measurement.
func FuzzDecodeMeasurement(f *testing.F) {
	seed, err := measure.EncodeMeasurement(seedMeasurement(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"v":1,"total":{"count":1,"hdr":"HISTFAAAABx4nJNpmSzMwMDAxMDAwMwgAQAGrgDd"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := measure.DecodeMeasurement(data)
		if err != nil {
			if !errors.Is(err, measure.ErrBadEncoding) {
				t.Fatalf("error %v does not wrap ErrBadEncoding", err)
			}
			return
		}
		if m == nil {
			return
		}
		var merged measure.Measurement
		merged.Merge(m)
		merged.Merge(m)
		_ = abreport.FromMeasurement(&merged, abreport.Options{})
		again := roundTrip(t, m)
		if diff := cmp.Diff(m, again, measurementEqual...); diff != "" {
			t.Fatalf("a decoded measurement does not survive another round trip:\n%s", diff)
		}
	})
}

// benchMeasurement is a measurement whose four phases each hold 100 000
// values spread over 1 µs..100 ms, wider than a loopback run's.
func benchMeasurement(b *testing.B) *measure.Measurement {
	m := seedMeasurement(b)
	for _, ph := range []*measure.Phase{&m.Connect, &m.Processing, &m.Waiting, &m.Total} {
		*ph = measure.NewPhase()
		for i := range int64(100_000) {
			ph.Record(1 + i*i%100_000)
		}
	}
	return m
}

// BenchmarkEncodeMeasurement is what the worker adds to storing one run.
func BenchmarkEncodeMeasurement(b *testing.B) {
	m := benchMeasurement(b)
	var n int
	for b.Loop() {
		enc, err := measure.EncodeMeasurement(m)
		if err != nil {
			b.Fatal(err)
		}
		n = len(enc)
	}
	b.ReportMetric(float64(n), "bytes")
}

// BenchmarkDecodeMeasurement is what merging adds per stored run.
func BenchmarkDecodeMeasurement(b *testing.B) {
	enc, err := measure.EncodeMeasurement(benchMeasurement(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := measure.DecodeMeasurement(enc); err != nil {
			b.Fatal(err)
		}
	}
}
