package metric

import (
	"math"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchq/benchq/internal/abreport"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

// full is a report with every metric set to a distinct value; its
// histogram holds 2000 requests of 1..2000 µs: by ab's rule p99.9 is the
// sample of index 1998 (1.999 ms) and p99.99 the slowest, which the
// report's exact maximum stands for.
func full() *abreport.Report {
	r := &abreport.Report{
		RequestsPerSecond: 540.14, TimePerRequestMs: 92.57, TimePerRequestAllMs: 1.851, TransferRateKbps: 3210.5,
		CompleteRequests: 1000, FailedRequests: 30, Failed: abreport.Failures{Connect: 10, Length: 20}, Non2xxResponses: 50,
		PercentilesMs: abreport.Percentiles{P50: 5, P66: 6, P75: 7, P80: 8, P90: 9, P95: 10, P98: 11, P99: 12, P100: 13},
	}
	r.ConnectionTimesMs.Total = abreport.PhaseStats{Min: 0.001, Mean: 5.5, Max: 13}
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for v := int64(1); v <= 2000; v++ {
		_ = h.RecordValue(v)
	}
	b, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	r.LatencyHistogram = string(b)
	return r
}

func TestMetricOfEveryMetric(t *testing.T) {
	want := map[string]float64{
		"rps": 540.14, "time_per_request_ms": 92.57, "time_per_request_all_ms": 1.851, "transfer_rate_kbps": 3210.5,
		"mean_ms": 5.5, "min_ms": 0.001, "max_ms": 13, "p99.9_ms": 1.999, "p99.99_ms": 13,
		"p50_ms": 5, "p66_ms": 6, "p75_ms": 7, "p80_ms": 8, "p90_ms": 9, "p95_ms": 10, "p98_ms": 11, "p99_ms": 12, "p100_ms": 13,
		"complete": 1000, "failed": 30, "non_2xx": 50, "non_2xx_ratio": 0.05,
		// 30 failed of 1000 complete + 30 failed - 20 length failures (already complete) = 1010 attempts.
		"failed_ratio": 30.0 / 1010,
		// At most 1000 - max(20 length, 50 non-2xx) = 950 succeeded: that
		// share of ab's req/s, and 60 of the 1010 attempts were errors.
		"good_rps": 540.14 * 950 / 1000, "error_ratio": 60.0 / 1010,
	}
	for _, m := range Names() {
		w, ok := want[m]
		if !ok {
			t.Errorf("metric %q has no expected value in this test", m)
			continue
		}
		if got, ok := Read(full(), m); !ok || !near(got, w) {
			t.Errorf("Read(report, %q) = %v, %v; want %v, true", m, got, ok, w)
		}
	}
	if got, ok := Read(full(), "p97_ms"); ok {
		t.Errorf("Read(report, p97_ms) = %v, true; want false (ab prints no 97 %%)", got)
	}
}

func TestMetricOfDeadRun(t *testing.T) {
	dead := &abreport.Report{FailedRequests: 11, Failed: abreport.Failures{Connect: 11}}
	for _, m := range []string{"time_per_request_ms", "mean_ms", "min_ms", "max_ms", "p50_ms", "p99_ms"} {
		if v, ok := Read(dead, m); ok {
			t.Errorf("Read(nothing completed, %q) = %v, true; want undefined", m, v)
		}
	}
	for m, w := range map[string]float64{"rps": 0, "complete": 0, "failed": 11, "failed_ratio": 1, "non_2xx_ratio": 0} {
		if v, ok := Read(dead, m); !ok || v != w {
			t.Errorf("Read(nothing completed, %q) = %v, %v; want %v, true", m, v, ok, w)
		}
	}
	if v, _ := Read(&abreport.Report{}, "failed_ratio"); v != 0 {
		t.Errorf("Read(nothing attempted, failed_ratio) = %v, want 0", v)
	}
}
