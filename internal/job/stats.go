package job

import (
	"math"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/abreport"
)

// newStat summarises xs; the zero Stat when xs is empty. SD is the sample
// standard deviation (n-1), as ab's and a spreadsheet's STDEV.
func newStat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	st := Stat{N: len(xs), Min: xs[0], Max: xs[0]}
	var sum float64
	for _, x := range xs {
		sum += x
		st.Min, st.Max = min(st.Min, x), max(st.Max, x)
	}
	st.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var sq float64
		for _, x := range xs {
			sq += (x - st.Mean) * (x - st.Mean)
		}
		st.SD = math.Sqrt(sq / float64(len(xs)-1))
	}
	if st.Mean != 0 {
		st.CV = st.SD / math.Abs(st.Mean)
	}
	return st
}

// metricStat summarises one threshold metric (see Metrics) over reports,
// counting only the runs where it is defined (see metricOf).
func metricStat(reports []*abreport.Report, metric string) Stat {
	return newStat(metricSamples(reports, metric))
}

// metricSamples is one metric's value in each of reports where it is
// defined, in the reports' order.
func metricSamples(reports []*abreport.Report, metric string) []float64 {
	xs := make([]float64, 0, len(reports))
	for _, r := range reports {
		if v, ok := metricOf(r, metric); ok {
			xs = append(xs, v)
		}
	}
	return xs
}

// metricOf reads one threshold metric from a run's report. ok is false for
// an unknown metric, and for a latency of a run where no request completed:
// such a run has no latency (ab prints none), and a 0 would let a dead
// target pass "p95_ms < 200".
//
// The ratios are defined so that each request counts once:
//   - failed_ratio = failed / (complete + failed - length failures): a
//     Length failure is a completed response with an unexpected size, so it
//     is already among the complete ones (the other classes never
//     complete); the denominator is http_load's "fetches". 0 when nothing
//     was attempted.
//   - non_2xx_ratio = non_2xx / complete: non-2xx responses are complete
//     (ab counts them so). 0 when nothing completed.
func metricOf(r *abreport.Report, metric string) (float64, bool) {
	if v, ok := counterOf(r, metric); ok {
		return v, true
	}
	if r.CompleteRequests <= 0 {
		return 0, false
	}
	t := r.ConnectionTimesMs.Total
	switch metric {
	case "time_per_request_ms":
		return r.TimePerRequestMs, true
	case "time_per_request_all_ms":
		return r.TimePerRequestAllMs, true
	case "mean_ms":
		return t.Mean, true
	case "min_ms":
		return t.Min, true
	case "max_ms":
		return t.Max, true
	}
	if pct, ok := percentOf(metric); ok {
		return r.PercentilesMs.At(pct)
	}
	if tail, ok := tailPercentOf(metric); ok {
		// A run stored without a readable histogram has no tail, like a
		// run where nothing completed: not a 0 that would pass a bound.
		v, ok, err := abreport.TailPercentileMs(r, tail)
		return v, ok && err == nil
	}
	return 0, false
}

// tailPercentOf reads "p99.9_ms" as "99.9": one of the percentages past
// ab's that the histogram answers.
func tailPercentOf(metric string) (string, bool) {
	for _, pc := range abreport.TailPercents() {
		if metric == "p"+pc+"_ms" {
			return pc, true
		}
	}
	return "", false
}

// counterOf reads the metrics defined for every run, even one where
// nothing completed.
func counterOf(r *abreport.Report, metric string) (float64, bool) {
	switch metric {
	case "rps":
		return r.RequestsPerSecond, true
	case "good_rps":
		// ab's req/s is complete requests over the time taken; the
		// successes are a share of the complete ones.
		if r.CompleteRequests <= 0 {
			return 0, true
		}
		return r.RequestsPerSecond * float64(max(0, succeededAtMost(r))) / float64(r.CompleteRequests), true
	case "error_ratio":
		return errorRatio(r), true
	case "transfer_rate_kbps":
		return r.TransferRateKbps, true
	case "complete":
		return float64(r.CompleteRequests), true
	case "failed":
		return float64(r.FailedRequests), true
	case "non_2xx":
		return float64(r.Non2xxResponses), true
	case "failed_ratio":
		return failedRatio(r), true
	case "non_2xx_ratio":
		if r.CompleteRequests <= 0 {
			return 0, true
		}
		return float64(r.Non2xxResponses) / float64(r.CompleteRequests), true
	}
	return 0, false
}

// errorRatio is the share of a run's attempted requests that did not
// succeed: failed, non-2xx, or both.
func errorRatio(r *abreport.Report) float64 {
	n := attempted(r)
	if n <= 0 {
		return 0
	}
	return min(1, max(0, float64(n-max(0, succeededAtMost(r)))/float64(n)))
}

func failedRatio(r *abreport.Report) float64 {
	attempts := r.CompleteRequests + r.FailedRequests - r.Failed.Length
	if attempts <= 0 || r.FailedRequests <= 0 {
		return 0
	}
	return min(1, float64(r.FailedRequests)/float64(attempts))
}

// percentOf reads NN from "pNN_ms".
func percentOf(metric string) (int, bool) {
	digits, ok := strings.CutPrefix(metric, "p")
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, "_ms")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// percentKeys are ab's percentages, the keys of PointSummary.PercentilesMs.
func percentKeys() []int { return []int{50, 66, 75, 80, 90, 95, 98, 99, 100} }
