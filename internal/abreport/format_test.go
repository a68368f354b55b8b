package abreport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

func TestRoundMs(t *testing.T) {
	for _, c := range []struct{ us, want int64 }{
		{0, 0}, {499, 0}, {500, 1}, {1499, 1}, {1500, 2}, {-3, 0}, {2_200_350, 2200},
	} {
		if got := roundMs(c.us); got != c.want {
			t.Errorf("roundMs(%d) = %d, want %d", c.us, got, c.want)
		}
	}
}

func TestMeanRounded(t *testing.T) {
	// ab truncates its mean to whole µs, then rounds half up to ms.
	for _, c := range []struct {
		ms   float64
		want int64
	}{
		{0.4999, 0}, {0.499999, 0}, {0.5, 1}, {1.4995, 1}, {1.5, 2}, {31.0015, 31}, {0.3, 0}, {2.5, 3},
	} {
		if got := meanRounded(c.ms); got != c.want {
			t.Errorf("meanRounded(%v) = %d, want %d", c.ms, got, c.want)
		}
	}
}

func TestMsRounded(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want int64
	}{
		{0.499, 0}, {0.5, 1}, {1.1, 1}, {2.7, 3}, {1000.5, 1001}, {0.001, 0},
	} {
		if got := msRounded(c.ms); got != c.want {
			t.Errorf("msRounded(%v) = %d, want %d", c.ms, got, c.want)
		}
	}
}

// TestGfmt: C's %g, as http_load prints, on the values of seeds/004.
func TestGfmt(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{4.42e6, "4.42e+06"}, {1.67401, "1.67401"}, {442, "442"}, {10000 / 1.67401, "5973.68"},
		{4.42e6 / 1.67401, "2.64037e+06"}, {999278, "999278"}, {0.083, "0.083"}, {0.0000123, "1.23e-05"},
		{0, "0"}, {123456789, "1.23457e+08"}, {0.0699367, "0.0699367"},
	} {
		if got := gfmt(c.v); got != c.want {
			t.Errorf("gfmt(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestHeartbeatStep(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 0}, {150, 0}, {151, 100}, {500, 100}, {1000, 100}, {2000, 200}, {50000, 5000}, {12345, 1234},
	} {
		if got := HeartbeatStep(c.n); got != c.want {
			t.Errorf("HeartbeatStep(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func rankedOf(t *testing.T, us ...int64) ranked {
	ph := newPhase()
	for _, v := range us {
		record(t, &ph, v)
	}
	return newRanked(ph.Hist, ph.Min, ph.Max)
}

func TestRankedMedian(t *testing.T) {
	for _, c := range []struct {
		name string
		us   []int64
		want int64
	}{
		// Values below 2048 µs are exact in the histogram.
		// ab gives 650 here (its odd branch averages s[2] and s[3]).
		{"odd count is the middle value", []int64{200, 300, 500, 800, 1100}, 500},
		{"even count averages the middle two", []int64{300, 300, 500, 1000}, 400},
		{"even average truncates to whole µs", []int64{1, 2}, 1},
		{"one value", []int64{700}, 700},
		// Above 2048 µs a bucket's highest equivalent value stands for it:
		// 10000 lies in [10000, 10007] at three significant digits.
		{"histogram precision", []int64{10000, 10000, 20000}, 10007},
		{"empty", nil, 0},
	} {
		if got := rankedOf(t, c.us...).median(); got != c.want {
			t.Errorf("%s: median(%v) = %d, want %d", c.name, c.us, got, c.want)
		}
	}
}

func TestRankedPercentiles(t *testing.T) {
	// 100..1000 µs: ab's index floor(10·p/100) is 5 (600) for 50, 6 (700) for 66.
	rk := rankedOf(t, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000)
	for _, c := range []struct {
		p    int
		want int64
	}{{50, 600}, {66, 700}, {75, 800}, {80, 900}, {90, 1000}, {99, 1000}, {100, 1000}} {
		if got := rk.abPercentile(c.p); got != c.want {
			t.Errorf("abPercentile(%d) = %d, want %d", c.p, got, c.want)
		}
	}
	// -e: rounded index trunc(0.5 + 3·i/100); i = 99 gives 3, past ab's
	// array of 3: clamped to the slowest.
	rk = rankedOf(t, 100, 200, 300)
	for _, c := range []struct {
		i    int
		want int64
	}{{0, 100}, {16, 100}, {17, 200}, {50, 300}, {99, 300}, {100, 300}} {
		if got := rk.abCSVPercentile(c.i); got != c.want {
			t.Errorf("abCSVPercentile(%d) = %d, want %d", c.i, got, c.want)
		}
	}
}

// TestRankedClampsToExtremes: the slowest request is exact even where its
// bucket is wide (2.2 s lies in a bucket 1024 µs wide).
func TestRankedClampsToExtremes(t *testing.T) {
	rk := rankedOf(t, 2_200_000, 2_200_000)
	if got := rk.abPercentile(50); got != 2_200_000 {
		t.Errorf("abPercentile(50) = %d, want 2200000", got)
	}
	if got := newRanked(hdrhistogram.New(1, 1000, 3), 0, 0).abPercentile(50); got != 0 {
		t.Errorf("abPercentile on an empty histogram = %d, want 0", got)
	}
}

// TestHTTPLoadSeed reproduces the first http_load run of seeds/004 from its
// own numbers (the seed lost the two spaces before "code"): max parallel
// and msecs/connect come from what http_load measures, the most requests in
// flight and the connect-to-write time, not from the concurrency level and
// the dial; a report stored before those were measured falls back to them.
func TestHTTPLoadSeed(t *testing.T) {
	seed := func() *Report {
		return &Report{
			CompleteRequests: 10000, ConcurrencyLevel: 100, HTMLTransferredBytes: 4420000, TimeTakenS: 1.67401,
			ConnectionTimesMs: ConnectionTimes{
				Connect: PhaseStats{Min: 0.083, Mean: 0.439808, Max: 11.448},
				Waiting: PhaseStats{Min: 0.691, Mean: 15.788, Max: 19.656},
			},
			StatusCodes: map[int]int64{200: 10000},
		}
	}
	measured := seed()
	measured.ConcurrencyLevel = 150
	measured.MaxParallel = 100
	measured.ConnectionTimesMs.Connect = PhaseStats{Min: 0.05, Mean: 0.2, Max: 9}
	measured.ConnectToWriteMs = &MinMeanMax{Min: 0.083, Mean: 0.439808, Max: 11.448}
	want := `10000 fetches, 100 max parallel, 4.42e+06 bytes, in 1.67401 seconds
442 mean bytes/connection
5973.68 fetches/sec, 2.64037e+06 bytes/sec
msecs/connect: 0.439808 mean, 11.448 max, 0.083 min
msecs/first-response: 15.788 mean, 19.656 max, 0.691 min
HTTP response codes:
  code 200 -- 10000
`
	for name, r := range map[string]*Report{"measured": measured, "stored before": seed()} {
		got := string(render(t, func(b *bytes.Buffer) error { return WriteHTTPLoad(b, r) }))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("WriteHTTPLoad(seed 004, %s) (-want +got):\n%s", name, diff)
		}
	}
}

// TestHTTPLoadShortRun: under 0.01 s http_load omits the rate line; failed
// fetches count as fetches, Length failures only once.
func TestHTTPLoadShortRun(t *testing.T) {
	r := &Report{CompleteRequests: 0, FailedRequests: 3, Failed: Failures{Connect: 3},
		ConcurrencyLevel: 1, TimeTakenS: 0.000115, StatusCodes: map[int]int64{}}
	got := string(render(t, func(b *bytes.Buffer) error { return WriteHTTPLoad(b, r) }))
	want := "3 fetches, 1 max parallel, 0 bytes, in 0.000115 seconds\n0 mean bytes/connection\nHTTP response codes:\n"
	if got != want {
		t.Errorf("WriteHTTPLoad(refused) = %q, want %q", got, want)
	}
}

// TestCSVLayout: ab's -e file shape as ab 2.3 writes it: the
// header and 101 rows "i,ms.mmm".
func TestCSVLayout(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("testdata", "reference", "ab-percentiles.csv"))
	if err != nil {
		t.Fatal(err)
	}
	m := &measure.Measurement{Concurrency: 1, Elapsed: time.Second}
	withRequests(t, m, totals(72, 75, 76, 76, 80, 91, 120, 2500), false)
	got := render(t, func(b *bytes.Buffer) error { return WriteCSV(b, FromMeasurement(m, Options{})) })
	want := strings.Split(strings.TrimRight(string(ref), "\n"), "\n")
	if diff := cmp.Diff(mask(want), mask(strings.Split(strings.TrimRight(string(got), "\n"), "\n"))); diff != "" {
		t.Errorf("CSV layout differs from ab's (-ab +ours):\n%s", diff)
	}
	if !bytes.HasPrefix(got, []byte("Percentage served,Time in ms\n0,0.072\n1,0.072\n")) ||
		!bytes.HasSuffix(got, []byte("\n99,2.500\n100,2.500\n")) {
		t.Errorf("WriteCSV = %s, want fastest 0.072 first and slowest 2.500 last", got)
	}
}

// TestGnuplotRows: ab's -g rows as ab 2.3 writes them for a start in
// UTC, sorted by total time, ms rounded half up.
func TestGnuplotRows(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("testdata", "reference", "ab-gnuplot.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	refLines := strings.Split(string(ref), "\n")
	s0 := time.Unix(1796083405, 0).UTC()
	samples := []measure.Sample{
		{Start: s0.Add(2 * time.Second), Connect: 500 * time.Microsecond, Processing: 1499 * time.Microsecond,
			Waiting: 1200 * time.Microsecond, Total: 1999 * time.Microsecond},
		{Start: s0, Connect: 100 * time.Microsecond, Processing: 200 * time.Microsecond,
			Waiting: 150 * time.Microsecond, Total: 300 * time.Microsecond},
	}
	got := string(render(t, func(b *bytes.Buffer) error { return WriteGnuplot(b, samples) }))
	want := refLines[0] + "\n" + refLines[1] + "\n" + "Tue Dec 01 00:03:27 2026\t1796083407\t1\t1\t2\t1\n"
	if got != want {
		t.Errorf("WriteGnuplot = %q, want %q", got, want)
	}
	if samples[0].Start != s0.Add(2*time.Second) {
		t.Errorf("WriteGnuplot reordered its input")
	}
}
