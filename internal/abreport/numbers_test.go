package abreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

// handMeasurement: 4 requests in 0.5 s at concurrency 2, total times
// 1.1, 1.1, 1.1 and 2.7 ms (connect 0.1 ms each), a long tail.
func handMeasurement(t *testing.T) *measure.Measurement {
	m := &measure.Measurement{ServerHostname: "127.0.0.1", ServerPort: 8080, DocumentPath: "/", DocumentLength: 900,
		Concurrency: 2, Method: "POST", Started: started(), Elapsed: 500 * time.Millisecond,
		TotalReceivedBytes: 4000, BodyReceivedBytes: 3600, TotalSentBytes: 800,
		StatusCodes: map[int]int64{200: 4}}
	withRequests(t, m, []req{
		{connect: 100, waiting: 900, processing: 1000},
		{connect: 100, waiting: 900, processing: 1000},
		{connect: 100, waiting: 900, processing: 1000},
		{connect: 100, waiting: 2500, processing: 2600},
	}, false)
	return m
}

func TestFromMeasurementByHand(t *testing.T) {
	r := FromMeasurement(handMeasurement(t), Options{BodySent: true})
	rates := map[string][2]float64{
		"time_taken_s":            {r.TimeTakenS, 0.5},
		"requests_per_second":     {r.RequestsPerSecond, 8},     // 4 / 0.5
		"time_per_request_ms":     {r.TimePerRequestMs, 250},    // 2 × 0.5 × 1000 / 4
		"time_per_request_all_ms": {r.TimePerRequestAllMs, 125}, // 0.5 × 1000 / 4
		"transfer_rate_kbps":      {r.TransferRateKbps, 7.8125}, // 4000 / 1024 / 0.5
		"sent_rate_kbps":          {r.SentRateKbps, 1.5625},     // 800 / 1024 / 0.5
		"total_rate_kbps":         {r.TotalRateKbps, 9.375},     // 4800 / 1024 / 0.5
	}
	for name, gw := range rates {
		if gw[0] != gw[1] {
			t.Errorf("%s = %v, want %v", name, gw[0], gw[1])
		}
	}
	// Mean 1.5 ms; deviations −0.4 ×3 and +1.2: Σ = 1.92 ms², /3 = 0.64, sd 0.8.
	// Textbook median of an even count: (1.1 + 1.1) / 2.
	wantTimes := ConnectionTimes{
		Connect:    PhaseStats{Min: 0.1, Mean: 0.1, SD: 0, Median: 0.1, Max: 0.1},
		Processing: PhaseStats{Min: 1, Mean: 1.4, SD: 0.8, Median: 1, Max: 2.6},
		Waiting:    PhaseStats{Min: 0.9, Mean: 1.3, SD: 0.8, Median: 0.9, Max: 2.5},
		Total:      PhaseStats{Min: 1.1, Mean: 1.5, SD: 0.8, Median: 1.1, Max: 2.7},
	}
	if diff := cmp.Diff(wantTimes, r.ConnectionTimesMs); diff != "" {
		t.Errorf("ConnectionTimesMs (-want +got):\n%s", diff)
	}
	// ab's index floor(4·p/100): 2 for 50 and 66, 3 from 75 on.
	wantPct := Percentiles{P50: 1.1, P66: 1.1, P75: 2.7, P80: 2.7, P90: 2.7, P95: 2.7, P98: 2.7, P99: 2.7, P100: 2.7}
	if diff := cmp.Diff(wantPct, r.PercentilesMs); diff != "" {
		t.Errorf("PercentilesMs (-want +got):\n%s", diff)
	}
	if v, ok := r.PercentilesMs.At(75); !ok || v != 2.7 {
		t.Errorf("PercentilesMs.At(75) = %v, %v, want 2.7, true", v, ok)
	}
	if _, ok := r.PercentilesMs.At(97); ok {
		t.Errorf("PercentilesMs.At(97) ok = true, want false")
	}
}

// TestWriteABByHand checks the printed table of handMeasurement: total mean
// 1.5 ms rounds half up to 2, the median 1.1 to 1, and with sd 0.8 the gap
// of 1 is more than one but less than two deviations: ab's WARNING.
func TestWriteABByHand(t *testing.T) {
	r := FromMeasurement(handMeasurement(t), Options{BodySent: true})
	got := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) }))
	want := `Requests per second:    8.00 [#/sec] (mean)
Time per request:       250.000 [ms] (mean)
Time per request:       125.000 [ms] (mean, across all concurrent requests)
Transfer rate:          7.81 [Kbytes/sec] received
                        1.56 kb/s sent
                        9.38 kb/s total

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.0      0       0
Processing:     1    1   0.8      1       3
Waiting:        1    1   0.8      1       3
Total:          1    2   0.8      1       3
WARNING: The median and mean for the total time are not within a normal deviation
        These results are probably not that reliable.

Percentage of the requests served within a certain time (ms)
  50%      1
  66%      1
  75%      3
  80%      3
  90%      3
  95%      3
  98%      3
  99%      3
 100%      3 (longest request)
`
	if i := strings.Index(got, "Requests per second:"); i < 0 || got[i:] != want {
		t.Errorf("WriteAB(hand) tail:\n%s\nwant:\n%s", got[max(i, 0):], want)
	}
}

// TestSaneError: totals 1.499, 1.499, 1.502 ms. The mean 1.5 rounds to 2,
// the textbook median 1.499 to 1, sd is 1.7 µs: more than two deviations
// apart, ab's ERROR. (ab's own odd-count median, (s[1]+s[2])/2 = 1.5005 ms,
// would round to 2 and hide it.)
func TestSaneError(t *testing.T) {
	m := &measure.Measurement{Concurrency: 1, Elapsed: time.Second}
	withRequests(t, m, totals(1499, 1499, 1502), false)
	r := FromMeasurement(m, Options{})
	got := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) }))
	for _, want := range []string{
		"Total:          1    2   0.0      1       2\n",
		"ERROR: The median and mean for the total time are more than twice the standard\n" +
			"       deviation apart. These results are NOT reliable.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteAB(skewed) lacks\n%s\ngot:\n%s", want, got)
		}
	}
	// Processing and Waiting equal Total here (connect 0), so they fail too.
	if n := strings.Count(got, "ERROR:"); n != 3 {
		t.Errorf("WriteAB(skewed) has %d ERROR lines, want 3 (processing, waiting, total)", n)
	}
	noConf := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{NoConfidence: true}) }))
	if strings.Contains(noConf, "ERROR") || !strings.Contains(noConf, "Total:          1     2    2\n") {
		t.Errorf("WriteAB(-S) = \n%s\nwant a min/avg/max table and no warnings", noConf)
	}
}

// TestSingleRequest: ab prints no percentile block for one request.
func TestSingleRequest(t *testing.T) {
	m := &measure.Measurement{Concurrency: 1, Elapsed: time.Millisecond}
	withRequests(t, m, totals(700), false)
	got := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, FromMeasurement(m, Options{}), TextOptions{}) }))
	if !strings.Contains(got, "Total:          1    1   0.0      1       1\n") || strings.Contains(got, "Percentage") {
		t.Errorf("WriteAB(one request) = \n%s\nwant a table and no percentiles", got)
	}
}
