package abreport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, diff)
	}
}

// req is one completed request's timings in µs; total is connect+processing.
type req struct{ connect, waiting, processing int64 }

// newPhase matches the engine's histogram geometry: 1 µs to 1 h, 3 digits.
func newPhase() measure.Phase {
	return measure.Phase{Hist: hdrhistogram.New(1, 3_600_000_000, 3)}
}

func record(t *testing.T, ph *measure.Phase, v int64) {
	t.Helper()
	if ph.Count == 0 || v < ph.Min {
		ph.Min = v
	}
	ph.Max = max(ph.Max, v)
	ph.Count++
	ph.Sum += v
	ph.SumSq += float64(v) * float64(v)
	if err := ph.Hist.RecordValue(v); err != nil {
		t.Fatalf("record %d: %v", v, err)
	}
}

// withRequests sets Complete, the four phases and, when keepSamples, the
// samples of m from reqs; requests start 1 ms apart from m.Started.
func withRequests(t *testing.T, m *measure.Measurement, reqs []req, keepSamples bool) {
	t.Helper()
	m.Connect, m.Processing, m.Waiting, m.Total = newPhase(), newPhase(), newPhase(), newPhase()
	for i, r := range reqs {
		total := r.connect + r.processing
		record(t, &m.Connect, r.connect)
		record(t, &m.Processing, r.processing)
		record(t, &m.Waiting, r.waiting)
		record(t, &m.Total, total)
		if keepSamples {
			m.Samples = append(m.Samples, measure.Sample{
				Start:      m.Started.Add(time.Duration(i) * time.Millisecond),
				Connect:    time.Duration(r.connect) * time.Microsecond,
				Processing: time.Duration(r.processing) * time.Microsecond,
				Waiting:    time.Duration(r.waiting) * time.Microsecond,
				Total:      time.Duration(total) * time.Microsecond,
				Status:     200,
			})
		}
	}
	m.Complete = int64(len(reqs))
}

// totals builds requests whose total times are the given µs (connect 0).
func totals(us ...int64) []req {
	reqs := make([]req, len(us))
	for i, v := range us {
		reqs[i] = req{connect: 0, waiting: v, processing: v}
	}
	return reqs
}

func render(t *testing.T, write func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatalf("render: %v", err)
	}
	return b.Bytes()
}

// started is a fixed start so golden files do not depend on the clock.
func started() time.Time { return time.Date(2026, 12, 1, 0, 3, 25, 0, time.UTC) }
