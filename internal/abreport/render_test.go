package abreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

// richMeasurement exercises every conditional line: TLS, keep-alive, every
// failure class, write errors, non-2xx, a body, an open model, and a
// 2.2 s outlier past HdrHistogram's exact range.
func richMeasurement(t *testing.T) *measure.Measurement {
	m := &measure.Measurement{
		ServerSoftware: "fasthttp", ServerHostname: "127.0.0.1", ServerPort: 8443,
		DocumentPath: "/api/items?page=2", DocumentLength: 1234, TLSProtocol: "TLSv1.3",
		Concurrency: 8, KeepAlive: true, Method: "PUT", Started: started(),
		Elapsed: 2500 * time.Millisecond,
		Failures: measure.Failures{Connect: 2, Receive: 1, Length: 3, Exceptions: 1, Timeout: 2, PortExhaustion: 1,
			BodyTooLarge: 2, HeaderTooLarge: 1},
		WriteErrors: 1, Non2xx: 4, KeepAliveRequests: 90,
		TotalReceivedBytes: 150000, BodyReceivedBytes: 123400, TotalSentBytes: 45000,
		StatusCodes: map[int]int64{200: 96, 404: 3, 500: 1},
		Open:        &measure.OpenModel{RequestedRate: 50, AchievedRate: 40, LateStarts: 7},
		MaxInFlight: 6,
		// Busy but not CPU-bound: 1.25 of 5 CPU-s (2.5 s × 2 cores).
		ClientCPU: 1200 * time.Millisecond, ClientCPUWait: 50 * time.Millisecond, ClientCores: 2,
	}
	m.Failed = m.Failures.Total()
	reqs := make([]req, 100)
	for i := range reqs {
		w := 1000 + int64(i*i%37)*400
		reqs[i] = req{connect: 200 + int64(i%7)*150, waiting: w, processing: w + 300 + int64(i%5)*100}
	}
	reqs[99].processing = 2_200_000
	withRequests(t, m, reqs, true)
	m.Open.Uncorrected = newPhase()
	for _, v := range []int64{900, 1100, 1300, 5000} {
		record(t, &m.Open.Uncorrected, v)
	}
	m.Open.SendLag = newPhase()
	for i := range int64(100) {
		record(t, &m.Open.SendLag, 3+i%10) // 3..12 µs
	}
	record(t, &m.Open.SendLag, 1800) // one start behind a stall
	// Three new connections of 250, 420 and 1700 µs to the request written.
	m.ConnectToWrite = measure.Phase{Count: 3, Sum: 2370, Min: 250, Max: 1700}
	return m
}

// closed is r as a closed-model run (ab's): without its open model.
func closed(r *Report) *Report {
	c := *r
	c.OpenModel = nil
	return &c
}

func TestGoldenRenderers(t *testing.T) {
	m := richMeasurement(t)
	r := FromMeasurement(m, Options{BodySent: true})
	c := closed(r)
	cases := []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"rich.ab.txt", func(b *bytes.Buffer) error { return WriteAB(b, c, TextOptions{}) }},
		{"rich.ab-S.txt", func(b *bytes.Buffer) error { return WriteAB(b, c, TextOptions{NoConfidence: true}) }},
		{"rich.ab-d.txt", func(b *bytes.Buffer) error { return WriteAB(b, c, TextOptions{NoPercentiles: true}) }},
		{"open.ab.txt", func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) }},
		{"open.ab-d.txt", func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{NoPercentiles: true}) }},
		{"rich.csv", func(b *bytes.Buffer) error { return WriteCSV(b, r) }},
		{"rich.tsv", func(b *bytes.Buffer) error { return WriteGnuplot(b, m.Samples) }},
		{"rich.http_load.txt", func(b *bytes.Buffer) error { return WriteHTTPLoad(b, r) }},
		{"rich.json", func(b *bytes.Buffer) error { return WriteJSON(b, r) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { golden(t, c.name, render(t, c.write)) })
	}
	variable := closed(FromMeasurement(m, Options{VariableLength: true}))
	variable.TLSProtocol, variable.KeepAlive = "", false
	golden(t, "variable.ab.txt", render(t, func(b *bytes.Buffer) error { return WriteAB(b, variable, TextOptions{}) }))
}

// TestOpenModelParsable reads an open-model report as ab's parsers do:
// every "Label:" line has its value in column 25, "Time per request" comes
// twice (the mean latency first), and the only percentile lines are ab's
// nine, the corrected ones.
func TestOpenModelParsable(t *testing.T) {
	r := FromMeasurement(richMeasurement(t), Options{})
	text := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) }))
	label := regexp.MustCompile(`^[A-Z][A-Za-z0-9/ ()-]*: +`)
	percent := regexp.MustCompile(`^ +\d+% +\d+`)
	var perRequest []string
	percentLines, labels, inTable := 0, 0, false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "Connection Times (ms)":
			inTable = true // its rows have their own columns
		case line == "":
			inTable = false
		case !inTable && label.MatchString(line):
			labels++
			if got := len(label.FindString(line)); got != 24 {
				t.Errorf("line %q has its value at column %d, want 25", line, got+1)
			}
		}
		if v, ok := strings.CutPrefix(line, "Time per request:       "); ok {
			perRequest = append(perRequest, v)
		}
		if percent.MatchString(line) {
			percentLines++
		}
	}
	want := []string{
		fmt.Sprintf("%.3f [ms] (mean)", r.ConnectionTimesMs.Total.Mean),
		"25.000 [ms] (mean, across all concurrent requests)",
	}
	if !slices.Equal(perRequest, want) {
		t.Errorf("Time per request lines = %q, want %q", perRequest, want)
	}
	if labels != 26 {
		t.Errorf("%d label lines checked, want 26", labels)
	}
	if percentLines != 9 {
		t.Errorf("%d lines look like ab's percentiles, want its 9", percentLines)
	}
	for _, line := range []string{"Requested rate:         50.00 [#/sec]\n", "Achieved rate:          40.00 [#/sec]\n",
		"Late starts:            7 ", "Send lag (ms):          50% 0.008, 90% 0.012, 99% 0.012, 100% 1.800 "} {
		if !strings.Contains(text, line) {
			t.Errorf("open-model report lacks %q", line)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r := FromMeasurement(richMeasurement(t), Options{BodySent: true, VariableLength: true})
	b := render(t, func(b *bytes.Buffer) error { return WriteJSON(b, r) })
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*r, back); diff != "" {
		t.Errorf("JSON round trip changed the report (-before +after):\n%s", diff)
	}
	for _, key := range []string{`"status_codes": {`, `"200": 96`, `"percentiles_ms": {`, `"port_exhaustion": 1`,
		`"open_model": {`, `"time_per_request_all_ms"`, `"latency_histogram": "`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	// ab's order of the percentile keys, not a map's sorted order.
	if i, j := bytes.Index(b, []byte(`"99":`)), bytes.Index(b, []byte(`"100":`)); i < 0 || j < i {
		t.Errorf(`JSON has "100" at %d before "99" at %d, want ab's order`, j, i)
	}
}

func TestDecodeHistogramRoundTrip(t *testing.T) {
	m := richMeasurement(t)
	r := FromMeasurement(m, Options{})
	h, err := DecodeHistogram(r)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(m.Total.Hist) {
		t.Errorf("DecodeHistogram(FromMeasurement(m)) differs from m.Total.Hist")
	}
	if got, want := h.TotalCount(), int64(100); got != want {
		t.Errorf("TotalCount() = %d, want %d", got, want)
	}
	// Two runs merge exactly: counts add, the outlier survives.
	h2, err := DecodeHistogram(r)
	if err != nil {
		t.Fatal(err)
	}
	if dropped := h.Merge(h2); dropped != 0 {
		t.Errorf("Merge dropped %d values", dropped)
	}
	if got, want := h.TotalCount(), int64(200); got != want {
		t.Errorf("merged TotalCount() = %d, want %d", got, want)
	}
	if got := h.Max(); got < 2_200_000 || got > 2_200_000*1001/1000 {
		t.Errorf("merged Max() = %d, want 2200000 within 0.1%%", got)
	}
}

func TestDecodeHistogramErrors(t *testing.T) {
	if _, err := DecodeHistogram(&Report{}); err != ErrNoHistogram {
		t.Errorf("DecodeHistogram(empty) = %v, want ErrNoHistogram", err)
	}
	_, err := DecodeHistogram(&Report{LatencyHistogram: "not base64!"})
	if err == nil || !strings.HasPrefix(err.Error(), "abreport: decode latency histogram: ") {
		t.Errorf("DecodeHistogram(garbage) = %v, want a wrapped decode error", err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, &Report{CompleteRequests: 3}); err != ErrNoHistogram {
		t.Errorf("WriteCSV(no histogram) = %v, want ErrNoHistogram", err)
	}
}

// TestEmptyRun renders a run where nothing completed (connection refused
// with -r): no rates, no table, no percentiles, no CSV or gnuplot rows.
func TestEmptyRun(t *testing.T) {
	m := &measure.Measurement{ServerHostname: "127.0.0.1", ServerPort: 9, DocumentPath: "/", Concurrency: 1,
		Elapsed: 3 * time.Millisecond, Failures: measure.Failures{Connect: 5}, Failed: 5, Started: started()}
	r := FromMeasurement(m, Options{})
	got := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) }))
	want := `Server Software:        
Server Hostname:        127.0.0.1
Server Port:            9

Document Path:          /
Document Length:        0 bytes

Concurrency Level:      1
Time taken for tests:   0.003 seconds
Complete requests:      0
Failed requests:        5
   (Connect: 5, Receive: 0, Length: 0, Exceptions: 0)
Total transferred:      0 bytes
HTML transferred:       0 bytes
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WriteAB(empty run) (-want +got):\n%s", diff)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"WriteCSV":     func(b *bytes.Buffer) error { return WriteCSV(b, r) },
		"WriteGnuplot": func(b *bytes.Buffer) error { return WriteGnuplot(b, m.Samples) },
	} {
		if out := render(t, write); len(out) != 0 {
			t.Errorf("%s(empty run) = %q, want nothing", name, out)
		}
	}
	if len(r.Hints) != 1 || !strings.HasPrefix(r.Hints[0], "connect:") {
		t.Errorf("Hints = %q, want the connect hint", r.Hints)
	}
}
