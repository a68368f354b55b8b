package measure

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// The steadiness rule's bounds (see Unsteady).
const (
	// steadyMinIntervals is how many judged intervals a metric needs: with
	// fewer, no shift can be told from the noise.
	steadyMinIntervals = 6
	// steadyMinLatencyCount is how many completions an interval needs for
	// its p50 to be judged.
	steadyMinLatencyCount = 20
	// steadyAlpha bounds the chance that a steady run with normal noise is
	// marked, per metric, after correcting for every segment tried.
	steadyAlpha = 0.001
	// steadyNoiseFloor is the least noise assumed, in log units (5 %): an
	// interval's percentiles come from a histogram that resolves about 6 %,
	// so a run steadier than that on paper is not believed to be.
	steadyNoiseFloor = 0.05
	// steadyMaxPoints caps the series searched: longer ones are judged on
	// medians of consecutive intervals, so the search stays quadratic in a
	// small number.
	steadyMaxPoints = 120
	// steadyMinSpan and steadyMinShare are the shortest stretch of a run
	// that counts as a shift, in time and as a share of the judged
	// intervals: anything shorter is an episode the timeline shows (a GC
	// pause, the client's threads starved by another process for a
	// second: seen in 1 of 10 steady nginx runs on a shared machine), not
	// a run whose averages mix two behaviours.
	steadyMinSpan  = time.Second
	steadyMinShare = 0.2
)

// steadyMaxClientWait is the share of the client's CPU capacity its
// threads may have waited for a CPU before the run's throughput is no
// longer judged: a closed-model client that waits runs at the CPU share
// other processes leave it, and that share moves its throughput (78-81 %
// falls within steady nginx runs on a shared machine whose client waited
// for 23-45 % of its capacity), while the server's latency holds.
const steadyMaxClientWait = 0.05

// steadyMinLatencyShift is the least change of the p50, in µs, that
// counts: below it the client's own wake-ups move a loopback target's p50
// (a read that spins or waits in the poller, a context switch: a steady
// in-process fasthttp target's p50 moved between 15 and 20 µs with the
// machine's load, 25 % and significant).
const steadyMinLatencyShift = 100

// steadyStarvedLatencyShift is the least change of the p50, in µs, that
// counts in a run whose client waited for a CPU (clientWaited): a starved
// client's own scheduling delays enter every latency it measures, and
// moved a steady loopback nginx's p50 from 0.05 to 0.6 ms for a second or
// two while the client waited 4-7 s of a 6 s run; a server's own shift of
// a millisecond or more still shows.
const steadyStarvedLatencyShift = 1000

// steadyMetric is one per-interval series the rule reads: its name in a
// reason, the least relative change that matters to a reader, and how an
// interval gives its value (ok false: the interval is not judged).
type steadyMetric struct {
	name       string
	throughput bool // judged only where the client had its CPU
	minRatio   float64
	minChange  float64 // the least absolute change that counts, in the value's units
	value      func(iv *Interval, sec float64) (v float64, ok bool)
	unit       func(v float64) string
}

// steadyMetrics are the metrics judged, throughput and the median
// latency, each at a 20 % change. Not the tail: on a machine the load
// generator shares, a sub-millisecond target's p99 flips between 0.1 and
// 3 ms from one interval to the next as the client's threads wait for a
// CPU (seen in 3 of 20 steady nginx and fasthttp runs judged on p99 too),
// which says nothing of the server.
func steadyMetrics() []steadyMetric {
	return []steadyMetric{
		{"throughput", true, 1.2, 0, func(iv *Interval, sec float64) (float64, bool) {
			return float64(iv.Requests) / sec, true
		}, func(v float64) string { return fmt.Sprintf("%.0f req/s", v) }},
		{"p50", false, 1.2, steadyMinLatencyShift, func(iv *Interval, _ float64) (float64, bool) {
			return float64(iv.Latency.Quantiles(0.5)[0]), iv.Latency.Count >= steadyMinLatencyCount
		}, latencyText},
	}
}

// Unsteady judges whether the run's throughput or latency shifted while it
// was measured, from its timeline, and says how in one sentence; "" for a
// steady run or one that cannot be judged (no timeline, too short).
//
// The rule, per metric (throughput and p50 of each interval, on a log
// scale so that changes are relative): the intervals of the measured
// window are taken, less the first and the last (a ramp-up and a cut-off
// interval) and, for the p50, those with fewer than 20 completions; at
// least six must remain. Every contiguous stretch of at least a second
// (and two intervals, and a fifth of the run) is compared with the rest of
// the run. Its shift is the difference of the rest's median and the
// stretch's level: its median, held back to its quartile nearer the
// rest's, so three quarters of the stretch must have moved. The shift
// must be significant, in units of the run's noise (the median absolute
// deviation of interval-to-interval changes, which a step or a ramp
// barely moves, at least 5 %), against Student's t at 0.1 % two-sided
// after a Bonferroni correction over every stretch tried; and it must
// matter: a 20 % change, and for the p50 at least 0.1 ms. A step (the
// stretch starts or ends the run), a stretch that came and went, and a
// ramp (its halves differ) are found; a single outlier interval is not. Throughput is not judged in a run whose
// client waited for a CPU more than 5 % of its capacity (see
// steadyMaxClientWait), and there the p50 must move at least 1 ms
// (steadyStarvedLatencyShift).
func (m *Measurement) Unsteady() string {
	tl := m.Timeline
	if tl == nil || tl.Interval <= 0 || len(tl.Intervals) == 0 {
		return ""
	}
	from, first, last := m.measuredIntervals()
	var best *steadyShift
	metrics := steadyMetrics()
	for i := range metrics {
		sm := &metrics[i]
		if m.clientWaited() {
			if sm.throughput {
				continue
			}
			sm.minChange = max(sm.minChange, steadyStarvedLatencyShift)
		}
		s := judgeSeries(tl, first, last, sm)
		if s != nil {
			s.origin = from
		}
		if s != nil && (best == nil || s.z > best.z) {
			best = s
		}
	}
	if best == nil {
		return ""
	}
	return best.reason(tl.Interval)
}

// clientWaited reports whether the client's threads waited for a CPU
// longer than steadyMaxClientWait of its capacity over the run (never
// where the system does not tell).
func (m *Measurement) clientWaited() bool {
	capacity := ClientCapacity(m.Elapsed, m.ClientCores, m.Concurrency)
	return capacity > 0 && float64(m.ClientCPUWait) > steadyMaxClientWait*float64(capacity)
}

// measuredIntervals is the range [first, last) of the timeline's intervals
// that lie inside the measured window, less its first and last intervals,
// and the window's start from the timeline's.
func (m *Measurement) measuredIntervals() (from time.Duration, first, last int) {
	tl := m.Timeline
	if !m.Started.IsZero() && !tl.Start.IsZero() {
		from = max(0, m.Started.Round(0).Sub(tl.Start.Round(0)))
	}
	end := from + m.Elapsed
	// The interval holding the window's start is a ramp-up (or half
	// warm-up): the next one is the first whole one after it.
	first = int(from/tl.Interval) + 1
	// The interval holding the end is cut off by it.
	last = min(len(tl.Intervals), int(end/tl.Interval))
	return from, first, last
}

// steadyShift is the stretch [from, to) of a series (in interval indexes)
// whose median level differs from the rest's.
type steadyShift struct {
	metric       *steadyMetric
	from, to     int
	at, rest     float64       // the levels, in the metric's units
	prefix, tail bool          // the stretch starts / ends the run (too little of it before / after to count)
	origin       time.Duration // the measured window's start, from the timeline's
	z            float64       // the shift in standard errors
}

// judgeSeries applies the rule to one metric; nil when it holds steady.
func judgeSeries(tl *Timeline, first, last int, sm *steadyMetric) *steadyShift {
	sec := tl.Interval.Seconds()
	var idx []int
	var ys []float64
	for i := first; i < last; i++ {
		v, ok := sm.value(&tl.Intervals[i], sec)
		if !ok {
			continue
		}
		idx = append(idx, i)
		ys = append(ys, math.Log(max(v, 1)))
	}
	idx, ys = condense(idx, ys)
	n := len(ys)
	if n < steadyMinIntervals {
		return nil
	}
	sigma := noiseOf(ys)
	// The shortest stretch: a second, two points, a fifth of the series.
	perPoint := tl.Interval * time.Duration(max(1, (idx[n-1]-idx[0]+1)/n))
	minLen := max(2, int(math.Ceil(float64(n)*steadyMinShare)), int(math.Ceil(float64(steadyMinSpan)/float64(perPoint))))
	if 2*minLen > n {
		return nil
	}
	tries := 0
	for L := minLen; L <= n-minLen; L++ {
		tries += n - L + 1
	}
	// σ is estimated from the series itself, so the bar is Student's t
	// rather than the normal's: a MAD has the efficiency of about 37 % of
	// its points.
	zCrit := tQuantile(1-steadyAlpha/(2*float64(tries)), max(3, 0.37*float64(n-1)))
	bar := math.Log(sm.minRatio)
	bestA, bestL, bestZ := 0, 0, 0.0
	for L := minLen; L <= n-minLen; L++ {
		for a := 0; a+L <= n; a++ {
			in := ys[a : a+L]
			rest := append(slices.Clone(ys[:a]), ys[a+L:]...)
			ref := median(rest)
			level := steadyLevel(in, ref)
			shift := level - ref
			// The standard error of a median is about 1.25 σ/√n.
			se := 1.2533 * sigma * math.Sqrt(1/float64(L)+1/float64(len(rest)))
			z := math.Abs(shift) / se
			big := math.Abs(shift) >= bar && math.Abs(math.Exp(level)-math.Exp(ref)) >= sm.minChange
			if big && z >= zCrit && z > bestZ {
				bestA, bestL, bestZ = a, L, z
			}
		}
	}
	if bestL == 0 {
		return nil
	}
	a, b := fitStretch(ys, bestA, bestA+bestL)
	rest := append(slices.Clone(ys[:a]), ys[b:]...)
	if len(rest) == 0 {
		rest = ys
	}
	return &steadyShift{
		metric: sm, from: idx[a], to: idx[b-1] + 1,
		at: math.Exp(median(ys[a:b])), rest: math.Exp(median(rest)),
		// Fewer points than a stretch on one side are not a level of
		// their own: the run stepped rather than came back.
		prefix: a < minLen, tail: n-b < minLen, z: bestZ,
	}
}

// fitStretch moves the edges of the stretch [a, b) of ys to where its
// level meets the rest's: it takes in the neighbours that lie nearer its
// level, and gives up the edge points that lie nearer the rest's, for a
// reason that names the right seconds (the surest stretch is not always
// the exactest).
func fitStretch(ys []float64, a, b int) (int, int) {
	level := median(ys[a:b])
	ref := median(append(slices.Clone(ys[:a]), ys[b:]...))
	near := func(y float64) bool { return math.Abs(y-level) <= math.Abs(y-ref) }
	for a > 0 && near(ys[a-1]) {
		a--
	}
	for b < len(ys) && near(ys[b]) {
		b++
	}
	for b-a > 1 && !near(ys[a]) {
		a++
	}
	for b-a > 1 && !near(ys[b-1]) {
		b--
	}
	return a, b
}

// steadyLevel is a stretch's level against the rest's, ref: its median,
// held back to its lower quartile when it lies above ref (its upper one
// below), so that a stretch counts as shifted only when three quarters of
// it are, and one outlying interval cannot carry a short stretch.
func steadyLevel(in []float64, ref float64) float64 {
	s := slices.Clone(in)
	slices.Sort(s)
	q := len(s) / 4 // the lower quartile's rank, rounded toward the edge
	if median(s) >= ref {
		return max(ref, min(s[q], median(s)))
	}
	return min(ref, max(s[len(s)-1-q], median(s)))
}

// condense keeps a series at most steadyMaxPoints long, replacing runs of
// consecutive points by their median (at the run's first index).
func condense(idx []int, ys []float64) ([]int, []float64) {
	n := len(ys)
	if n <= steadyMaxPoints {
		return idx, ys
	}
	group := (n + steadyMaxPoints - 1) / steadyMaxPoints
	var ci []int
	var cy []float64
	for a := 0; a < n; a += group {
		b := min(n, a+group)
		ci = append(ci, idx[a])
		cy = append(cy, median(ys[a:b]))
	}
	return ci, cy
}

// noiseOf is the series' noise σ, from the median absolute deviation of
// its successive differences (each a difference of two noises, hence
// √2): a step adds one outlying difference and a ramp shifts them all
// alike, so neither inflates it as it would a plain deviation.
func noiseOf(ys []float64) float64 {
	d := make([]float64, len(ys)-1)
	for i := range d {
		d[i] = ys[i+1] - ys[i]
	}
	md := median(d)
	for i := range d {
		d[i] = math.Abs(d[i] - md)
	}
	return max(steadyNoiseFloor, 1.4826*median(d)/math.Sqrt2)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// tQuantile is Student's t distribution's p-quantile with df degrees of
// freedom, by the Cornish-Fisher expansion around the normal's: in the far
// tail it errs high, which only makes the rule more cautious.
func tQuantile(p, df float64) float64 {
	z := math.Sqrt2 * math.Erfinv(2*p-1)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*df) + (5*z5+16*z3+3*z)/(96*df*df)
}

// reason says what shifted, how much and when, in a reader's words; times
// are from the start of the measured window.
func (s *steadyShift) reason(interval time.Duration) string {
	at := func(i int) string {
		return fmt.Sprintf("%.3g s", max(0, time.Duration(i)*interval-s.origin).Seconds())
	}
	before, after, when := s.rest, s.at, ""
	switch {
	case s.prefix && !s.tail: // the run began at the stretch's level and moved to the rest's
		before, after, when = s.at, s.rest, "at "+at(s.to)+" of the run"
	case s.tail && !s.prefix:
		when = "at " + at(s.from) + " of the run"
	default:
		when = "between " + at(s.from) + " and " + at(s.to) + " of the run, and came back"
	}
	verb := "rose"
	if after < before {
		verb = "fell"
	}
	u := s.metric.unit
	return fmt.Sprintf("%s %s %s from %s to %s %s", s.metric.name, verb, change(before, after), u(before), u(after), when)
}

// change is a relative change as a reader says it: "35 %" or "18×".
func change(before, after float64) string {
	r := after / before
	if r >= 2 {
		return fmt.Sprintf("%.3g×", r)
	}
	return fmt.Sprintf("%.0f %%", math.Abs(r-1)*100)
}

func latencyText(us float64) string {
	ms := us / 1000
	if ms >= 10 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2g ms", ms)
}
