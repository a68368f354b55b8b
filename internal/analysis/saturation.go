package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/job"
)

// Saturation rules. Both tolerances are 5 %: repeats of the same point on a
// quiet machine differ by a few percent, and a rule that fires on that
// noise would name a knee in every flat series.
const (
	// plateauGain is the req/s gain per doubling of concurrency below
	// which a series has stopped rising.
	plateauGain = 0.05
	// kneeSlack is how much faster than concurrency latency must grow, as a
	// factor, before it counts as a knee.
	kneeSlack = 1.05
)

// saturation finds, for each target and requests/duration/rate value with
// at least two concurrency values run, where req/s stops rising, where
// latency grows faster than concurrency, and where failures begin. Series
// come in the order of their first point in the spec.
func saturation(points []job.PointSummary) []job.Saturation {
	type seriesKey struct {
		target string
		slice  sliceKey
	}
	var order []seriesKey
	series := map[seriesKey][]job.PointSummary{}
	slicesPer := map[string]int{}
	for _, p := range points {
		if p.Runs == 0 {
			continue
		}
		k := seriesKey{p.Point.Target, sliceOf(p.Point)}
		if _, ok := series[k]; !ok {
			order = append(order, k)
			slicesPer[k.target]++
		}
		series[k] = append(series[k], p)
	}
	var out []job.Saturation
	for _, k := range order {
		s := series[k]
		if len(s) < 2 {
			continue
		}
		slices.SortFunc(s, func(a, b job.PointSummary) int { return cmp.Compare(a.Point.Concurrency, b.Point.Concurrency) })
		out = append(out, saturate(s, slicesPer[k.target] > 1))
	}
	return out
}

// saturate analyses one series sorted by concurrency; named adds the
// requests/duration/rate value to the sentence, for targets with several.
func saturate(s []job.PointSummary, named bool) job.Saturation {
	p := s[0].Point
	sat := job.Saturation{Target: p.Target, Requests: p.Requests, Duration: p.Duration, Rate: p.Rate}
	plateau, level := plateauOf(s)
	sat.PlateauAt = plateau
	sat.PeakAt, sat.FallPct = fallOf(s, plateau, level)
	sat.LatencyKneeAt = kneeOf(s)
	sat.FailuresFrom = failuresOf(s)
	sat.ClientBoundFrom = clientBoundOf(s)
	server := ""
	sat.ServerCPUBoundFrom, server = serverLimit(s) // limit.go
	dead := !slices.ContainsFunc(s, func(p job.PointSummary) bool { return p.RPS.Mean > 0 })
	sat.Sentence = sentence(sat, s[len(s)-1].Point.Concurrency, s[lastLive(s)].Point.Concurrency, level, dead, named, server)
	return sat
}

// plateauOf returns the lowest concurrency from which req/s gains less
// than plateauGain per doubling to every higher concurrency in the series,
// and the highest mean req/s from there on (the plateau's level). Gains
// over steps other than ×2 are normalised to a doubling:
// (rps2/rps1)^(1/log2(c2/c1)) - 1. Comparing with every later point, not
// only the next, means a dip followed by a further rise is no plateau. A
// point with 0 req/s (nothing completed) cannot start one; falling to 0
// after it does not end one.
func plateauOf(s []job.PointSummary) (*int, float64) {
	for i := 0; i < len(s)-1; i++ {
		if s[i].RPS.Mean <= 0 {
			continue
		}
		level, flat := s[i].RPS.Mean, true
		for _, later := range s[i+1:] {
			if gainPerDoubling(s[i], later) >= plateauGain {
				flat = false
				break
			}
			level = max(level, later.RPS.Mean)
		}
		if flat {
			c := s[i].Point.Concurrency
			return &c, level
		}
	}
	return nil, 0
}

// fallShare is how far below its peak req/s must end for the series to
// read as falling rather than flat: more than a plateau's noise.
const fallShare = 0.10

// fallOf returns the concurrency of the plateau's highest req/s and how far,
// in percent, the last point with req/s falls below it, when that is more
// than fallShare: a server that degrades under load is not on a plateau.
// Points where nothing completed are left to the failures finding.
func fallOf(s []job.PointSummary, plateau *int, level float64) (*int, float64) {
	if plateau == nil || level <= 0 {
		return nil, 0
	}
	last := s[lastLive(s)].RPS.Mean
	fall := 1 - last/level
	if fall <= fallShare {
		return nil, 0
	}
	for _, p := range s {
		if p.Point.Concurrency >= *plateau && p.RPS.Mean == level {
			c := p.Point.Concurrency
			return &c, fall * 100
		}
	}
	return nil, 0
}

// lastLive is the index of the last point with req/s, or the last point.
func lastLive(s []job.PointSummary) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].RPS.Mean > 0 {
			return i
		}
	}
	return len(s) - 1
}

func gainPerDoubling(from, to job.PointSummary) float64 {
	doublings := math.Log2(float64(to.Point.Concurrency) / float64(from.Point.Concurrency))
	return math.Pow(to.RPS.Mean/from.RPS.Mean, 1/doublings) - 1
}

// kneeOf returns the lowest concurrency whose mean time per request is
// more than kneeSlack times the previous point's scaled by the step in
// concurrency. ab's time per request is c / rps, so this is also where
// req/s falls by more than about 5 %. Points where nothing completed have
// no latency and are skipped (they show as failures).
func kneeOf(s []job.PointSummary) *int {
	prev := -1
	for i, p := range s {
		if p.TimePerRequestMs.N == 0 || p.TimePerRequestMs.Mean <= 0 {
			continue
		}
		if prev >= 0 {
			q := s[prev]
			latency := p.TimePerRequestMs.Mean / q.TimePerRequestMs.Mean
			conc := float64(p.Point.Concurrency) / float64(q.Point.Concurrency)
			if latency > conc*kneeSlack {
				c := p.Point.Concurrency
				return &c
			}
		}
		prev = i
	}
	return nil
}

// failuresOf returns the lowest concurrency with failed requests, or with
// no req/s at all (a server that stops answering, as Apache at c = 512 in
// seed 003).
func failuresOf(s []job.PointSummary) *int {
	for _, p := range s {
		if p.FailedRatio.Mean > 0 || p.RPS.Mean <= 0 {
			c := p.Point.Concurrency
			return &c
		}
	}
	return nil
}

// clientBoundOf returns the lowest concurrency whose load generator was
// short of CPU in some repeat.
func clientBoundOf(s []job.PointSummary) *int {
	for _, p := range s {
		if p.ClientSaturated {
			c := p.Point.Concurrency
			return &c
		}
	}
	return nil
}

// sentence says the three findings in one line, e.g. "apache: req/s
// plateaus near 164 from c = 4; latency grows faster than concurrency from
// c = 512; failures from c = 512.", and where the client, not the server,
// was the limit; server is the clause of the target's CPU (serverLimit),
// if any. A series that falls more than fallShare past its peak says so
// rather than calling it a plateau; dead, no request completed at any
// concurrency.
func sentence(sat job.Saturation, lastC, fallC int, level float64, dead, named bool, server string) string {
	var b strings.Builder
	b.WriteString(sat.Target)
	if named {
		b.WriteString(" (" + sliceLabel(sat) + ")")
	}
	switch {
	case sat.PeakAt != nil:
		fmt.Fprintf(&b, ": req/s peaks near %s at c = %d, then falls %.0f %% by c = %d", roughly(level), *sat.PeakAt, sat.FallPct, fallC)
	case sat.PlateauAt != nil:
		fmt.Fprintf(&b, ": req/s plateaus near %s from c = %d", roughly(level), *sat.PlateauAt)
	case dead:
		b.WriteString(": no request completed at any concurrency")
	default:
		fmt.Fprintf(&b, ": req/s still rising at c = %d", lastC)
	}
	if sat.LatencyKneeAt != nil {
		fmt.Fprintf(&b, "; latency grows faster than concurrency from c = %d", *sat.LatencyKneeAt)
	} else {
		b.WriteString("; latency grows no faster than concurrency")
	}
	if sat.FailuresFrom != nil {
		fmt.Fprintf(&b, "; failures from c = %d", *sat.FailuresFrom)
	} else {
		b.WriteString("; no failures")
	}
	if sat.ClientBoundFrom != nil {
		fmt.Fprintf(&b, "; the load generator was short of CPU from c = %d, so req/s there measures the client", *sat.ClientBoundFrom)
	}
	b.WriteString(server)
	b.WriteString(".")
	return b.String()
}

func sliceLabel(sat job.Saturation) string {
	switch {
	case sat.Rate > 0 && sat.Duration > 0:
		return fmt.Sprintf("rate = %s/s, t = %s", roughly(sat.Rate), sat.Duration)
	case sat.Rate > 0:
		return fmt.Sprintf("rate = %s/s, n = %d", roughly(sat.Rate), sat.Requests)
	case sat.Duration > 0:
		return "t = " + sat.Duration.String()
	default:
		return "n = " + strconv.Itoa(sat.Requests)
	}
}

// roughly writes v to three significant digits without an exponent, as a
// person reads a level off a chart: 163.7 -> "164", 1347.1 -> "1350".
func roughly(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	// Divide or multiply by an exact power of ten, never by its inverse:
	// 135 / 0.1 is 1350.0000000000002.
	digits := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	if digits < 0 {
		scale := math.Pow10(-digits)
		return strconv.FormatFloat(math.Round(v/scale)*scale, 'f', -1, 64)
	}
	scale := math.Pow10(digits)
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
}
