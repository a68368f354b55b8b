package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

// noiseSig is what the test reads of a job.Significance.
type noiseSig struct {
	P           *float64 `json:"p"`
	Significant bool     `json:"significant"`
	Conclusive  bool     `json:"conclusive"`
	NBase       int      `json:"n_base"`
	N           int      `json:"n"`
	Text        string   `json:"text"`
	CILowPct    *float64 `json:"ci_low_pct"`
	CIHighPct   *float64 `json:"ci_high_pct"`
}

type noiseComparison struct {
	RPSPct float64  `json:"rps_pct"`
	RPS    noiseSig `json:"rps_significance"`
}

type noiseAnalysis struct {
	Points []struct {
		Point struct {
			Target string `json:"target"`
		} `json:"point"`
		Comparison    *noiseComparison `json:"comparison"`
		PercentilesMs map[string]struct {
			N    int      `json:"n"`
			Mean *float64 `json:"mean"`
		} `json:"percentiles_ms"`
	} `json:"points"`
	CompareTo *struct {
		Cells []struct {
			Comparison *noiseComparison `json:"comparison"`
		} `json:"cells"`
	} `json:"compare_to"`
	Verdict struct {
		Result string `json:"result"`
	} `json:"verdict"`
}

// TestComparisonsSayWhenTheyAreNoise runs real jobs, eight repeats a point,
// against loopback targets whose time per request is a sleep: two
// identical jobs compared show no significant difference and pass a 5 %
// regression gate; a target 25 % slower per request (20 % fewer req/s)
// shows a significant drop, against the baseline target in one job and
// against the earlier job, and fails the gate.
func TestComparisonsSayWhenTheyAreNoise(t *testing.T) {
	m := startMain(t, nil)
	base := "http://" + m.Addr()
	fast := testservers.StartTarget(t, "ok", 5*time.Millisecond).URL
	slow := testservers.StartTarget(t, "ok", 6250*time.Microsecond).URL
	spec := func(targets map[string]string, extra map[string]any) map[string]any {
		var ts []map[string]any
		for _, name := range []string{"svc", "slower"} {
			if url, ok := targets[name]; ok {
				ts = append(ts, map[string]any{"name": name, "url": url})
			}
		}
		s := map[string]any{
			"targets": ts,
			"request": map[string]any{"keepalive": true},
			"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{60}, "repeats": 8},
		}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	run := func(s map[string]any) (apiJob, noiseAnalysis) {
		t.Helper()
		j := submit(t, base, s)
		j = waitJob(t, base, j.ID, 60*time.Second)
		if j.Status != "succeeded" {
			t.Fatalf("job = %+v, want succeeded", j)
		}
		resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+j.ID+"/results", nil)
		var r struct {
			Analysis noiseAnalysis `json:"analysis"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil {
			t.Fatalf("GET results = %d %s", resp.StatusCode, b)
		}
		return j, r.Analysis
	}
	vsJob := func(a noiseAnalysis) noiseComparison {
		t.Helper()
		if a.CompareTo == nil || len(a.CompareTo.Cells) != 1 || a.CompareTo.Cells[0].Comparison == nil {
			t.Fatalf("compare_to = %+v, want one compared cell", a.CompareTo)
		}
		return *a.CompareTo.Cells[0].Comparison
	}

	first, _ := run(spec(map[string]string{"svc": fast}, nil))
	gate := func(baseline apiJob) map[string]any {
		return map[string]any{"compare_to": baseline.ID, "thresholds": []string{"rps >= 0.95 * baseline.rps"}}
	}

	// At α = 0.05 one comparison of identical jobs in twenty reads as
	// significant by design, and a shared machine drifts: while other
	// test packages start and stop beside this one, a job can run a few
	// per cent slower than the one a minute before it, and eight tight
	// repeats make that drift significant. Up to four identical jobs are
	// tried, each against the one just before it, so a drift that lasts
	// does not fail every try, while a comparison that calls identical
	// jobs different every time still fails.
	var again apiJob
	var c noiseComparison
	prev := first
	for try := 1; try <= 4; try++ {
		var a noiseAnalysis
		again, a = run(spec(map[string]string{"svc": fast}, gate(prev)))
		c = vsJob(a)
		t.Logf("identical jobs, try %d: %+.2f %%, %s", try, c.RPSPct, c.RPS.Text)
		if !c.RPS.Significant && again.Verdict == "pass" {
			break
		}
		prev = again
	}
	if c.RPS.Significant || !c.RPS.Conclusive || c.RPS.P == nil || c.RPS.NBase != 8 || c.RPS.N != 8 ||
		!strings.HasPrefix(c.RPS.Text, "~ ") || c.RPS.CILowPct == nil ||
		// "~" where the interval holds 0, or where false-discovery
		// control over the job's comparisons took a lone p < 0.05 away.
		(*c.RPS.CILowPct > 0 || *c.RPS.CIHighPct < 0) && !strings.Contains(c.RPS.Text, "not significant among") {
		t.Errorf("identical jobs' req/s comparison = %+v, want no significant difference over 8 + 8 repeats", c.RPS)
	}
	if again.Verdict != "pass" {
		t.Errorf("identical job's gate verdict = %q, want pass", again.Verdict)
	}

	slower, a := run(spec(map[string]string{"svc": slow}, gate(again)))
	c = vsJob(a)
	t.Logf("slower job: %+.2f %%, %s", c.RPSPct, c.RPS.Text)
	if !c.RPS.Significant || c.RPSPct > -10 || !strings.HasPrefix(c.RPS.Text, "-") || !strings.Contains(c.RPS.Text, "(p") {
		t.Errorf("slower job's req/s comparison = %+.2f %% %+v, want a significant drop", c.RPSPct, c.RPS)
	}
	if slower.Verdict != "fail" {
		t.Errorf("slower job's gate verdict = %q, want fail", slower.Verdict)
	}

	both, a := run(spec(map[string]string{"svc": fast, "slower": slow}, map[string]any{"baseline": "svc"}))
	for _, p := range a.Points {
		// The tail comes from each run's histogram: at least the sleep.
		for _, pc := range []string{"99.9", "99.99"} {
			if st := p.PercentilesMs[pc]; st.N != 8 || st.Mean == nil || *st.Mean < 5 {
				t.Errorf("%s p%s = %+v, want 8 repeats of at least 5 ms", p.Point.Target, pc, st)
			}
		}
		if p.Point.Target != "slower" {
			continue
		}
		if p.Comparison == nil {
			t.Fatalf("job %s: slower has no comparison with the baseline target", both.ID)
		}
		t.Logf("slower vs svc in one job: %+.2f %%, %s", p.Comparison.RPSPct, p.Comparison.RPS.Text)
		if !p.Comparison.RPS.Significant || p.Comparison.RPSPct > -10 {
			t.Errorf("slower vs svc = %+v, want a significant drop", p.Comparison)
		}
	}
	resp, md := call(t, http.MethodGet, base+"/v1/jobs/"+both.ID+"/report?format=markdown", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(md), "| slower vs svc | -") || !strings.Contains(string(md), "Mann-Whitney U") ||
		!strings.Contains(string(md), "| target | c | p50 | p90 | p99 | p99.9 | p99.99 |") {
		t.Errorf("markdown report = %d\n%s\nwant the significant drop and the note on the test", resp.StatusCode, md)
	}
}
