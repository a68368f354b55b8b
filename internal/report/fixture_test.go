package report

import (
	"fmt"
	"math"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// The fixture is seeds/002's study in small: apache vs lighttpd, ab -c
// {5,50,100} -n {100,1000}, two repeats, apache the baseline, one
// threshold that both break at c=100. Every number is made by hand
// from the point's coordinates, so the golden files change only when a
// renderer does.
func fixtureJob() *job.Job {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	finished := created.Add(2 * time.Minute)
	return &job.Job{
		ID: "job_fixture",
		Spec: job.Spec{
			Name: "apache vs lighttpd, 25 KB image",
			Targets: []job.Target{
				{Name: "apache", URL: "http://127.0.0.1:8081/test.jpg"},
				{Name: "lighttpd", URL: "http://127.0.0.1:8082/test.jpg"},
			},
			Sweep:      job.Sweep{Concurrency: []int{5, 50, 100}, Requests: []int{100, 1000}, Repeats: 2},
			Baseline:   "apache",
			Thresholds: job.Thresholds("p99_ms < 200"),
		},
		Status:     job.StatusSucceeded,
		CreatedAt:  created,
		StartedAt:  &created,
		FinishedAt: &finished,
		Verdict:    job.VerdictFail,
	}
}

// fixtureRuns returns every scheduled run, in the schedule's (interleaved)
// order, as the store returns them.
func fixtureRuns(j *job.Job) []job.Run {
	points := j.Spec.Points()
	var runs []job.Run
	for _, k := range j.Spec.Schedule() {
		p := points[k.Point]
		start := j.CreatedAt.Add(time.Duration(len(runs)) * time.Second)
		runs = append(runs, job.Run{
			RunKey: k, Target: p.Target, Concurrency: p.Concurrency,
			StartedAt: start, FinishedAt: start.Add(time.Second),
			Result: fixtureReport(p, k.Repeat, start),
		})
	}
	return runs
}

// fixtureReport makes a plausible ab result: lighttpd c/10 % faster, req/s
// rising with concurrency to a plateau, repeat 2 a little slower.
func fixtureReport(p job.Point, repeat int, start time.Time) *abreport.Report {
	rps := 1000 * math.Min(float64(p.Concurrency), 50) / 50 * (1 - 0.02*float64(repeat))
	if p.TargetIndex == 1 {
		rps *= 1 + float64(p.Concurrency)/1000
	}
	if p.Requests == 1000 {
		rps *= 1.05
	}
	rps = math.Round(rps*1000) / 1000
	taken := math.Round(float64(p.Requests)/rps*1e6) / 1e6
	tpr := float64(p.Concurrency) * taken * 1000 / float64(p.Requests)
	total := abreport.PhaseStats{Min: 1, Mean: tpr, SD: tpr / 10, Median: tpr, Max: tpr * 3}
	// lighttpd's first repeat at c = 100 ran on a client short of CPU: 95 %
	// of its two cores; every other run used a quarter of them.
	saturated := p.TargetIndex == 1 && p.Concurrency == 100 && repeat == 0
	cpu := taken * 2 * map[bool]float64{false: 0.25, true: 0.95}[saturated]
	// apache at c = 100, n = 100 answered 5 of its requests with a 503.
	var non2xx int64
	if p.TargetIndex == 0 && p.Concurrency == 100 && p.Requests == 100 {
		non2xx = 5
	}
	codes := map[int]int64{200: int64(p.Requests) - non2xx}
	if non2xx > 0 {
		codes[503] = non2xx
	}
	return &abreport.Report{
		ServerSoftware: []string{"Apache/2.4.62", "lighttpd/1.4.76"}[p.TargetIndex],
		ServerHostname: "127.0.0.1", ServerPort: 8081 + p.TargetIndex, Method: "GET",
		DocumentPath: "/test.jpg", DocumentLength: 25600,
		ConcurrencyLevel: p.Concurrency, TimeTakenS: taken,
		CompleteRequests:      int64(p.Requests),
		TotalTransferredBytes: int64(p.Requests) * 25850, HTMLTransferredBytes: int64(p.Requests) * 25600,
		TotalBodySentBytes: int64(p.Requests) * 90,
		RequestsPerSecond:  rps, TimePerRequestMs: tpr, TimePerRequestAllMs: taken * 1000 / float64(p.Requests),
		TransferRateKbps: float64(p.Requests) * 25850 / 1024 / taken,
		ConnectionTimesMs: abreport.ConnectionTimes{
			Connect:    abreport.PhaseStats{Min: 0, Mean: 0.1, SD: 0.05, Median: 0, Max: 1},
			Processing: total, Waiting: total, Total: total,
		},
		PercentilesMs: abreport.Percentiles{
			P50: tpr, P66: tpr * 1.1, P75: tpr * 1.2, P80: tpr * 1.3, P90: tpr * 1.5,
			P95: tpr * 1.8, P98: tpr * 2, P99: tpr * 2.5, P100: tpr * 3,
		},
		StatusCodes: codes, Non2xxResponses: non2xx,
		StartedAt:  start,
		ClientCPUS: math.Round(cpu*1e6) / 1e6, ClientCores: 2, ClientSaturated: saturated,
	}
}

// fixtureAnalysis aggregates the runs the way analysis.Analyze is specified to
// (mean, sample sd, min, max per point; comparison to the baseline point),
// written out by hand so this package's tests do not depend on it.
func fixtureAnalysis(j *job.Job, runs []job.Run) job.Analysis {
	var a job.Analysis
	byPoint := map[int][]*abreport.Report{}
	for _, r := range runs {
		byPoint[r.Point] = append(byPoint[r.Point], r.Result)
	}
	for _, p := range j.Spec.Points() {
		rs := byPoint[p.Index]
		ps := job.PointSummary{Point: p, Runs: len(rs), PercentilesMs: map[string]job.Stat{}}
		ps.RPS = stat(rs, func(r *abreport.Report) float64 { return r.RequestsPerSecond })
		ps.GoodRPS = stat(rs, func(r *abreport.Report) float64 {
			return r.RequestsPerSecond * float64(r.CompleteRequests-r.Non2xxResponses) / float64(r.CompleteRequests)
		})
		ps.ErrorRatio = stat(rs, func(r *abreport.Report) float64 {
			return float64(r.Non2xxResponses) / float64(r.CompleteRequests)
		})
		ps.TimePerRequestMs = stat(rs, func(r *abreport.Report) float64 { return r.TimePerRequestMs })
		ps.PercentilesMs["50"] = stat(rs, func(r *abreport.Report) float64 { return r.PercentilesMs.P50 })
		ps.PercentilesMs["99"] = stat(rs, func(r *abreport.Report) float64 { return r.PercentilesMs.P99 })
		for _, r := range rs {
			ps.ClientSaturated = ps.ClientSaturated || r.ClientSaturated
		}
		a.Points = append(a.Points, ps)
	}
	for i := range a.Points {
		addComparison(&a, i, j.Spec.Baseline)
	}
	a.Saturation = []job.Saturation{
		{Target: "apache", Requests: 100, PlateauAt: ptr(50), Sentence: "apache (requests = 100) stops scaling at c=50."},
		{Target: "lighttpd", Requests: 100, PlateauAt: ptr(50), Sentence: "lighttpd (requests = 100) stops scaling at c=50."},
	}
	a.Verdict = job.VerdictResult{Result: job.VerdictFail}
	for _, ps := range a.Points {
		if v := ps.PercentilesMs["99"].Mean; v >= 200 {
			a.Verdict.Failures = append(a.Verdict.Failures, job.ThresholdFailure{
				Threshold: "p99_ms < 200", Target: ps.Point.Target, Point: ps.Point.Index,
				Concurrency: ps.Point.Concurrency, Value: v,
			})
		}
	}
	return a
}

func addComparison(a *job.Analysis, i int, baseline string) {
	ps := &a.Points[i]
	if ps.Point.Target == baseline {
		return
	}
	for _, b := range a.Points {
		if b.Point.Target == baseline && b.Point.Concurrency == ps.Point.Concurrency && b.Point.Requests == ps.Point.Requests {
			pct := (ps.RPS.Mean - b.RPS.Mean) / b.RPS.Mean * 100
			// The renderers print the significance's text; which cells
			// are significant is made up here (Analyze's test checks
			// the rule): the small difference is within noise.
			sig := job.Significance{P: ptrF(0.01), Significant: true, Conclusive: true, NBase: b.Runs, N: ps.Runs, Text: fmt.Sprintf("%+.2f %% [%+.1f, %+.1f] (p=0.01)", pct, pct-2, pct+2)}
			if pct < 1 {
				sig = job.Significance{P: ptrF(0.4), Conclusive: true, NBase: b.Runs, N: ps.Runs, Text: fmt.Sprintf("~ %+.2f %% [%+.1f, %+.1f] (p=0.40)", pct, pct-2, pct+2)}
			}
			ps.Comparisons = []job.Comparison{{Baseline: baseline, RPSPct: pct, RPS: fmt.Sprintf("%+.2f %%", pct), RPSSignificance: sig}}
			ps.Comparison = &ps.Comparisons[0]
		}
	}
}

func stat(rs []*abreport.Report, f func(*abreport.Report) float64) job.Stat {
	s := job.Stat{N: len(rs), Min: math.Inf(1), Max: math.Inf(-1)}
	for _, r := range rs {
		v := f(r)
		s.Mean += v / float64(len(rs))
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	for _, r := range rs {
		s.SD += (f(r) - s.Mean) * (f(r) - s.Mean)
	}
	if len(rs) > 1 {
		s.SD = math.Sqrt(s.SD / float64(len(rs)-1))
	}
	if s.Mean != 0 {
		s.CV = s.SD / s.Mean
	}
	return s
}

func ptr(v int) *int { return &v }

func ptrF(v float64) *float64 { return &v }
