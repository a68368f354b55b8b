package metric

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/benchq/benchq/internal/abreport"
)

// Direction says which way a metric gets better.
type Direction string

// Directions.
const (
	LowerIsBetter  Direction = "lower"
	HigherIsBetter Direction = "higher"
)

// Metric is one entry of the table.
type Metric struct {
	// Name is how a threshold ("p99_ms < 50"), a trend and a trend query
	// write the metric.
	Name string
	// Unit is what the value counts: "req/s", "ms", "KB/s", "requests" or
	// "ratio" (a share from 0 to 1).
	Unit string
	// Better says whether lower or higher values are better.
	Better Direction
	// Description is one sentence for a person choosing a metric.
	Description string
	// Read reads the metric from one run's result. ok is false where the
	// run does not define it: a latency of a run where no request
	// completed has none (ab prints none), and a 0 would let a dead target
	// pass "p95_ms < 200".
	Read func(r *abreport.Report) (v float64, ok bool)
	// TrendRank places the metric in the list the dashboard's trend page
	// offers first, 1 leading; 0 leaves it out of that list (any metric
	// can still be asked for in the page's URL).
	TrendRank int
}

// table is every metric in the order error messages list them. Built
// once, never written.
var table = build()

func build() []Metric {
	t := []Metric{
		{Name: "rps", Unit: "req/s", Better: HigherIsBetter, TrendRank: 1,
			Description: "completed requests per second, whatever their status (ab's Requests per second)",
			Read:        always(func(r *abreport.Report) float64 { return r.RequestsPerSecond })},
		{Name: "good_rps", Unit: "req/s", Better: HigherIsBetter,
			Description: "successful requests per second: 2xx with the expected length",
			Read:        always(goodRPS)},
		{Name: "time_per_request_ms", Unit: "ms", Better: LowerIsBetter,
			Description: "ab's Time per request (mean): concurrency over req/s",
			Read:        latency(func(r *abreport.Report) (float64, bool) { return r.TimePerRequestMs, true })},
		{Name: "time_per_request_all_ms", Unit: "ms", Better: LowerIsBetter,
			Description: "ab's Time per request across all concurrent requests: one over req/s",
			Read:        latency(func(r *abreport.Report) (float64, bool) { return r.TimePerRequestAllMs, true })},
		{Name: "transfer_rate_kbps", Unit: "KB/s", Better: HigherIsBetter,
			Description: "Kbytes received per second (ab's Transfer rate)",
			Read:        always(func(r *abreport.Report) float64 { return r.TransferRateKbps })},
		{Name: "mean_ms", Unit: "ms", Better: LowerIsBetter, TrendRank: 6,
			Description: "mean total time of a completed request",
			Read:        latency(func(r *abreport.Report) (float64, bool) { return r.ConnectionTimesMs.Total.Mean, true })},
		{Name: "min_ms", Unit: "ms", Better: LowerIsBetter,
			Description: "shortest total time of a completed request",
			Read:        latency(func(r *abreport.Report) (float64, bool) { return r.ConnectionTimesMs.Total.Min, true })},
		{Name: "max_ms", Unit: "ms", Better: LowerIsBetter,
			Description: "longest total time of a completed request",
			Read:        latency(func(r *abreport.Report) (float64, bool) { return r.ConnectionTimesMs.Total.Max, true })},
	}
	rank := map[int]int{50: 2, 90: 3, 99: 4}
	for _, pc := range []int{50, 66, 75, 80, 90, 95, 98, 99} {
		t = append(t, percentile(pc, rank[pc]))
	}
	for _, pc := range abreport.TailPercents() {
		t = append(t, tailPercentile(pc))
	}
	t = append(t, percentile(100, 0))
	return append(t,
		Metric{Name: "complete", Unit: "requests", Better: HigherIsBetter,
			Description: "requests that completed, whatever their status (ab's Complete requests)",
			Read:        always(func(r *abreport.Report) float64 { return float64(r.CompleteRequests) })},
		Metric{Name: "failed", Unit: "requests", Better: LowerIsBetter,
			Description: "requests that failed: not connected, reset, timed out, of an unexpected length (ab's Failed requests)",
			Read:        always(func(r *abreport.Report) float64 { return float64(r.FailedRequests) })},
		Metric{Name: "failed_ratio", Unit: "ratio", Better: LowerIsBetter, TrendRank: 7,
			Description: "failed requests over the requests attempted",
			Read:        always(failedRatio)},
		Metric{Name: "non_2xx", Unit: "requests", Better: LowerIsBetter,
			Description: "completed requests answered with a status other than 2xx (ab's Non-2xx responses)",
			Read:        always(func(r *abreport.Report) float64 { return float64(r.Non2xxResponses) })},
		Metric{Name: "non_2xx_ratio", Unit: "ratio", Better: LowerIsBetter,
			Description: "non-2xx responses over the completed requests",
			Read:        always(non2xxRatio)},
		Metric{Name: "error_ratio", Unit: "ratio", Better: LowerIsBetter,
			Description: "requests that failed or were not 2xx over the requests attempted",
			Read:        always(errorRatio)},
	)
}

// percentile is ab's "pc % of the requests served within" line.
func percentile(pc, rank int) Metric {
	desc := strconv.Itoa(pc) + " % of the completed requests took at most this long (ab's percentile table)"
	if pc == 100 {
		desc = "the longest request (ab's 100 % line)"
	}
	return Metric{Name: "p" + strconv.Itoa(pc) + "_ms", Unit: "ms", Better: LowerIsBetter, TrendRank: rank,
		Description: desc,
		Read:        latency(func(r *abreport.Report) (float64, bool) { return r.PercentilesMs.At(pc) })}
}

// tailPercentile is one of the percentages past ab's, which the run's
// histogram answers.
func tailPercentile(pc string) Metric {
	rank := 0
	if pc == "99.9" {
		rank = 5
	}
	return Metric{Name: "p" + pc + "_ms", Unit: "ms", Better: LowerIsBetter, TrendRank: rank,
		Description: pc + " % of the completed requests took at most this long, read from the run's latency histogram",
		Read: latency(func(r *abreport.Report) (float64, bool) {
			// A run stored without a readable histogram has no tail, like
			// a run where nothing completed: not a 0 that would pass a
			// bound.
			v, ok, err := abreport.TailPercentileMs(r, pc)
			return v, ok && err == nil
		})}
}

// always reads a metric every run defines, even one where nothing
// completed.
func always(f func(*abreport.Report) float64) func(*abreport.Report) (float64, bool) {
	return func(r *abreport.Report) (float64, bool) { return f(r), true }
}

// latency reads a metric only a run where some request completed defines.
func latency(f func(*abreport.Report) (float64, bool)) func(*abreport.Report) (float64, bool) {
	return func(r *abreport.Report) (float64, bool) {
		if r.CompleteRequests <= 0 {
			return 0, false
		}
		return f(r)
	}
}

// All is every metric, in the order error messages list them.
func All() []Metric { return slices.Clone(table) }

// Names is every metric's name, in All's order.
func Names() []string {
	out := make([]string, len(table))
	for i, m := range table {
		out[i] = m.Name
	}
	return out
}

// Lookup is the metric of this name.
func Lookup(name string) (Metric, bool) {
	i := slices.IndexFunc(table, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return table[i], true
}

// Known reports whether name is a metric's name.
func Known(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// Canonical returns the metric meant by name: name itself, or name +
// "_ms" for the latency short forms ("p99", "mean"); ok is false for a
// name that is neither.
func Canonical(name string) (string, bool) {
	if Known(name) {
		return name, true
	}
	if Known(name + "_ms") {
		return name + "_ms", true
	}
	return "", false
}

// Read reads the metric called name from one run's result; ok is false
// for an unknown name and where the run does not define the metric (see
// Metric.Read).
func Read(r *abreport.Report, name string) (float64, bool) {
	m, ok := Lookup(name)
	if !ok {
		return 0, false
	}
	return m.Read(r)
}

// TrendOffered is the names of the metrics the trend page offers first,
// by TrendRank.
func TrendOffered() []string {
	var ranked []Metric
	for _, m := range table {
		if m.TrendRank > 0 {
			ranked = append(ranked, m)
		}
	}
	slices.SortFunc(ranked, func(a, b Metric) int { return cmp.Compare(a.TrendRank, b.TrendRank) })
	out := make([]string, len(ranked))
	for i, m := range ranked {
		out[i] = m.Name
	}
	return out
}
