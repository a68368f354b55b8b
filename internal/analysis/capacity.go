package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
	"github.com/benchq/benchq/internal/search"
)

// ReasonIncomplete is a capacity's reason when the job ended before its
// search did (canceled, or failed).
const ReasonIncomplete = "incomplete"

// JudgeProbe judges one probe's result against the SLO. A metric the run
// does not define (a latency where nothing completed) misses its bound,
// and so does a run in which no request succeeded: a dead target must not
// pass "p99_ms < 50".
func JudgeProbe(slo []job.Threshold, r *abreport.Report) (passed bool, failed []string) {
	for _, t := range slo {
		v, ok := metric.Read(r, t.Metric)
		if !ok || !holds(t, v) {
			failed = append(failed, t.String())
		}
	}
	if metric.SucceededAtMost(r) <= 0 {
		failed = append(failed, NoSuccessRule)
	}
	return len(failed) == 0, failed
}

// SearchProbe is a stored probe as internal/search reads it; the worker
// and Capacity both judge it here, so the worker's next step and the
// analysis's answer come from the same verdicts.
func SearchProbe(slo []job.Threshold, run job.Run) search.Probe {
	passed, _ := JudgeProbe(slo, run.Result)
	p := search.Probe{Passed: passed, ClientSaturated: run.Result.ClientSaturated,
		Requests: metric.Attempted(run.Result),
		Elapsed:  run.FinishedAt.Sub(run.StartedAt)}
	if om := run.Result.OpenModel; om != nil {
		p.Rate = om.RequestedRate
	}
	return p
}

// Probes returns, per target index, the spec's stored probes in the order
// they ran: complete runs under a probe's key (job.ProbeKey). A partial
// probe (cut by a cancel) judges nothing and is left out.
func Probes(runs []job.Run) map[int][]job.Run {
	out := map[int][]job.Run{}
	for _, r := range runs {
		ti, _, ok := r.Probe()
		if !ok || r.Result == nil || r.Partial {
			continue
		}
		out[ti] = append(out[ti], r)
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b job.Run) int { return cmp.Compare(a.Repeat, b.Repeat) })
	}
	return out
}

// Capacity reads each target's capacity from its probes, and the
// sentence that says it. Nil without a search.
func Capacity(s job.Spec, runs []job.Run) ([]job.Capacity, string) {
	if s.Search == nil {
		return nil, ""
	}
	slo, err := s.Search.SLOs()
	if err != nil {
		return nil, ""
	}
	cfg := s.Search.Config()
	byTarget := Probes(runs)
	out := make([]job.Capacity, len(s.Targets))
	for i, t := range s.Targets {
		out[i] = capacityOf(t.Name, cfg, slo, byTarget[i])
	}
	ref := referenceTarget(s)
	compareCapacity(out, ref)
	return out, capacitySentence(out, ref, s.Search.SLO)
}

func capacityOf(target string, cfg search.Config, slo []job.Threshold, runs []job.Run) job.Capacity {
	c := job.Capacity{Target: target, Probes: make([]job.CapacityProbe, 0, len(runs))}
	probes := make([]search.Probe, len(runs))
	for i, r := range runs {
		probes[i] = SearchProbe(slo, r)
		c.Probes = append(c.Probes, capacityProbe(slo, r, probes[i].Rate))
	}
	reason := ReasonIncomplete
	if st := search.Next(cfg, probes); st.Done {
		reason = string(st.Reason)
	}
	res := search.Estimate(probes, search.Reason(reason))
	c.Rate, c.CILow, c.CIHigh, c.Reason = res.Rate, res.Low, res.High, reason
	// A pass says the capacity is at least the rate less what the probe
	// could not show; a fail, that it is below the rate. The estimate is
	// the middle of what both say.
	if eps := unseenOverload(slo, runs, probes, cfg.ProbeDuration); c.CILow > 0 && eps > 0 {
		c.CILow /= 1 + eps
		if c.CIHigh > 0 {
			c.Rate = math.Sqrt(c.CILow * c.CIHigh)
		}
	}
	c.Requests, c.ElapsedS = res.Requests, res.Elapsed.Seconds()
	c.LimitedBy = capacityLimit(c)
	return c
}

// unseenOverload is how far above its sustainable rate a server can be
// loaded for one probe and still meet the latency SLO, as a share of the
// rate; the low edge of the interval is lowered by it. Above its capacity
// a server's line grows by the excess each second, so the request sent t
// seconds into the probe waits about excess/rate × t longer than it would
// at the capacity: a percentile q of a probe of length T has waited
// excess/rate × qT more, and passes while that fits in the SLO's slack,
// its bound less what the percentile read at the lowest rate probed (a
// server with no line). A short probe or a loose bound thus widens the
// interval; an SLO on failures alone does not.
func unseenOverload(slo []job.Threshold, runs []job.Run, probes []search.Probe, probe time.Duration) float64 {
	var base *abreport.Report // the lowest rate's passing probe
	var baseRate float64
	for i, p := range probes {
		if p.Passed && (base == nil || p.Rate < baseRate) {
			base, baseRate = runs[i].Result, p.Rate
		}
	}
	if base == nil || probe <= 0 {
		return 0
	}
	var worst float64
	for _, t := range slo {
		q, ok := percentileOf(t.Metric)
		if !ok || (t.Op != "<" && t.Op != "<=") {
			continue
		}
		v, ok := metric.Read(base, t.Metric)
		if slack := t.Value - v; ok && slack > 0 {
			worst = max(worst, slack/1000/(q*probe.Seconds()))
		}
	}
	return worst
}

// percentileOf reads q from a percentile metric's name: p90_ms is 0.9.
func percentileOf(name string) (float64, bool) {
	if !strings.HasPrefix(name, "p") || !strings.HasSuffix(name, "_ms") {
		return 0, false
	}
	pc, err := strconv.ParseFloat(strings.TrimSuffix(name[1:], "_ms"), 64)
	if err != nil || pc <= 0 || pc > 100 {
		return 0, false
	}
	return pc / 100, true
}

func capacityProbe(slo []job.Threshold, r job.Run, rate float64) job.CapacityProbe {
	passed, failed := JudgeProbe(slo, r.Result)
	p := job.CapacityProbe{N: r.Repeat, Rate: rate, Passed: passed, Failed: failed,
		ClientSaturated: r.Result.ClientSaturated}
	p.P50Ms, _ = metric.Read(r.Result, "p50_ms")
	p.P99Ms, _ = metric.Read(r.Result, "p99_ms")
	p.FailedRatio, _ = metric.Read(r.Result, "failed_ratio")
	if om := r.Result.OpenModel; om != nil {
		p.AchievedRate, p.LateStarts = om.AchievedRate, om.LateStarts
	}
	if r.Server != nil && r.Server.CPUShare != nil {
		v := *r.Server.CPUShare
		p.ServerCPUShare = &v
	}
	return p
}

// capacityLimit judges what held the target back where its SLO first
// failed, as judgeLimit does for a point: the client when a probe's load
// generator saturated, else the server's CPU when it was busy at the
// failing rate, else neither when the CPU was known to have headroom.
func capacityLimit(c job.Capacity) string {
	if c.Reason == string(search.ClientSaturated) {
		return LimitedByClient
	}
	if c.CIHigh == 0 {
		return ""
	}
	var share []float64
	for _, p := range c.Probes {
		if p.Rate == c.CIHigh && p.ServerCPUShare != nil {
			share = append(share, *p.ServerCPUShare)
		}
	}
	switch {
	case len(share) == 0:
		return ""
	case newStat(share).Mean >= ServerCPUBound:
		return LimitedByServerCPU
	default:
		return LimitedByNeither
	}
}

// referenceTarget is the target the others' capacities are compared
// with: the baseline, else the first.
func referenceTarget(s job.Spec) int {
	for i, t := range s.Targets {
		if t.Name == s.Baseline {
			return i
		}
	}
	return 0
}

func compareCapacity(cs []job.Capacity, ref int) {
	base := cs[ref]
	for i := range cs {
		if i == ref || base.Rate <= 0 || cs[i].Rate <= 0 {
			continue
		}
		pct := (cs[i].Rate/base.Rate - 1) * 100
		cs[i].Baseline, cs[i].Pct = base.Target, &pct
	}
}

// capacitySentence says the capacities in one line, the reference first:
// "apache sustains 8 900 req/s [8 700, 9 100] at p99_ms < 50; lighttpd
// 12 400 [12 100, 12 700], +39 %".
func capacitySentence(cs []job.Capacity, ref int, slo []string) string {
	if len(cs) == 0 {
		return ""
	}
	order := append([]int{ref}, slices.DeleteFunc(seq(len(cs)), func(i int) bool { return i == ref })...)
	var b strings.Builder
	for k, i := range order {
		c := cs[i]
		if k == 0 {
			fmt.Fprintf(&b, "%s sustains %s at %s", c.Target, capacityText(c, " req/s"), strings.Join(slo, " and "))
			continue
		}
		fmt.Fprintf(&b, "; %s %s", c.Target, capacityText(c, ""))
		if c.Pct != nil {
			fmt.Fprintf(&b, ", %+.0f %%", *c.Pct)
		}
	}
	return b.String()
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// capacityText is one target's rate with its bracket, or what the search
// could say instead.
func capacityText(c job.Capacity, unit string) string {
	switch {
	case c.Reason == ReasonIncomplete && c.Rate == 0:
		return "(search not finished)"
	case c.Rate == 0:
		return "less than " + Thousands(c.CIHigh) + unit + " (the SLO failed at min_rate)"
	case c.Reason == string(search.ClientSaturated):
		return "at least " + Thousands(c.CILow) + unit + " (the load generator saturated above it)"
	case c.CIHigh == 0:
		return "at least " + Thousands(c.CILow) + unit + " (" + searchEnd(c.Reason) + ")"
	}
	return fmt.Sprintf("%s%s [%s, %s]", Thousands(c.Rate), unit, Thousands(c.CILow), Thousands(c.CIHigh))
}

func searchEnd(reason string) string {
	switch reason {
	case string(search.AtMaxRate):
		return "max_rate"
	case string(search.Budget):
		return "the search's budget ran out"
	case string(search.ProbeLimit):
		return "the probe limit was reached"
	}
	return "search not finished"
}

// Thousands rounds v to three significant digits (at least to a whole
// number) and groups its digits in threes with a space: 12 400.
func Thousands(v float64) string {
	if v >= 1000 {
		e := math.Pow(10, math.Floor(math.Log10(v))-2)
		v = math.Round(v/e) * e
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
