package abreport

import "fmt"

// TailPercents are the percentages past ab's 99 that TailPercentileMs
// reads from the histogram; ab's own table stops at 99 and its text
// output keeps doing so.
func TailPercents() []string { return []string{"99.9", "99.99"} }

// TailPercentileMs is the total time at percent (one of TailPercents) by
// ab's stdout rule, the sample at 0-based index floor(n·p/100) of the
// sorted times, read from the report's latency histogram. ok is false for
// a run without completed requests or histogram, and for another percent.
func TailPercentileMs(r *Report, percent string) (ms float64, ok bool, err error) {
	var perMillion int64
	switch percent {
	case "99.9":
		perMillion = 999_000
	case "99.99":
		perMillion = 999_900
	default:
		return 0, false, nil
	}
	if r == nil || r.CompleteRequests <= 0 {
		return 0, false, nil
	}
	h, err := DecodeHistogram(r)
	if err != nil {
		return 0, false, fmt.Errorf("abreport: p%s: %w", percent, err)
	}
	t := r.ConnectionTimesMs.Total
	rk := newRanked(h, msToUs(t.Min), msToUs(t.Max))
	if rk.count() == 0 {
		return 0, false, nil
	}
	return usToMs(rk.at(rk.count()*perMillion/1_000_000 + 1)), true, nil
}
