package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/junittest"
)

// junitJob is one target, svc, at c = 1 and 2, 100 requests, two repeats,
// every run stored: its p99 is about 126 ms at both (fixtureReport).
func junitJob(thresholds ...string) (*job.Job, []job.Run) {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	finished := created.Add(10 * time.Second)
	j := &job.Job{
		ID: "job_junit",
		Spec: job.Spec{
			Name:       "junit",
			Targets:    []job.Target{{Name: "svc", URL: "http://127.0.0.1:8081/"}},
			Sweep:      job.Sweep{Concurrency: []int{1, 2}, Requests: []int{100}, Repeats: 2},
			Thresholds: job.Thresholds(thresholds...),
		},
		Status: job.StatusSucceeded, CreatedAt: created, StartedAt: &created, FinishedAt: &finished,
	}
	return j, fixtureRuns(j)
}

// renderJUnit writes the job's JUnit with its real analysis, checks it
// is well-formed and valid against the published schema, and decodes it.
func renderJUnit(t *testing.T, j *job.Job, runs []job.Run, a job.Analysis) (junitSuites, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, FormatJUnit, j, runs, a); err != nil {
		t.Fatalf("Write(junit) = %v", err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit report is not well-formed XML: %v\n%s", err, buf.Bytes())
	}
	junittest.Validate(t, buf.Bytes())
	return doc, buf.Bytes()
}

// outcome names a case's outcome and its type: "failure threshold",
// "error no_success", "skipped", "pass".
func (c junitCase) outcome() string {
	switch {
	case c.Failure != nil:
		return "failure " + c.Failure.Type
	case c.Error != nil:
		return "error " + c.Error.Type
	case c.Skipped != nil:
		return "skipped"
	}
	return "pass"
}

// cases lists every case as "suite | name | outcome", and checks the
// counts of every suite and of the whole agree with the cases.
func cases(t *testing.T, doc junitSuites) []string {
	t.Helper()
	var out []string
	tests, failures, errs := 0, 0, 0
	for _, s := range doc.Suites {
		n := map[string]int{}
		for _, c := range s.Cases {
			kind, _, _ := strings.Cut(c.outcome(), " ")
			n[kind]++
			out = append(out, string(s.Name)+" | "+string(c.Name)+" | "+c.outcome())
			if string(c.Classname) != string(s.Name) && string(s.Name) != "junit" {
				t.Errorf("case %q has classname %q in suite %q", c.Name, c.Classname, s.Name)
			}
		}
		if s.Tests != len(s.Cases) || s.Failures != n["failure"] || s.Errors != n["error"] || s.Skipped != n["skipped"] {
			t.Errorf("suite %s counts tests %d failures %d errors %d skipped %d, its cases %d, %v", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), n)
		}
		tests, failures, errs = tests+s.Tests, failures+s.Failures, errs+s.Errors
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Errors != errs {
		t.Errorf("testsuites counts %d/%d/%d, its suites %d/%d/%d", doc.Tests, doc.Failures, doc.Errors, tests, failures, errs)
	}
	return out
}

func TestJUnitOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		thresholds []string
		change     func(j *job.Job, runs []job.Run) []job.Run
		// edit changes the analysis after Analyze, for failures that need
		// a baseline job or history.
		edit func(a *job.Analysis)
		want []string
	}{
		{
			name:       "a threshold broken in every cell, one held",
			thresholds: []string{"p99_ms < 100", "failed_ratio < 0.01"},
			want: []string{
				"svc | p99_ms < 100 · c=1 n=100 | failure threshold",
				"svc | failed_ratio < 0.01 · c=1 n=100 | pass",
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | p99_ms < 100 · c=2 n=100 | failure threshold",
				"svc | failed_ratio < 0.01 · c=2 n=100 | pass",
				"svc | requests succeeded · c=2 n=100 | pass",
			},
		},
		{
			name: "no thresholds: each cell's rule still shows it",
			want: []string{"svc | requests succeeded · c=1 n=100 | pass", "svc | requests succeeded · c=2 n=100 | pass"},
		},
		{
			name:   "no thresholds and no-success allowed: one case per cell",
			change: func(j *job.Job, runs []job.Run) []job.Run { j.Spec.AllowNoSuccess = true; return runs },
			want:   []string{"svc | c=1 n=100 | pass", "svc | c=2 n=100 | pass"},
		},
		{
			name:       "a threshold scoped to a target judges its cells only",
			thresholds: []string{"svc: p99_ms < 100"},
			change: func(j *job.Job, _ []job.Run) []job.Run {
				j.Spec.Targets = append(j.Spec.Targets, job.Target{Name: "other", URL: "http://127.0.0.1:8082/"})
				j.Spec.Sweep.Concurrency = []int{1}
				return fixtureRuns(j)
			},
			want: []string{
				"svc | svc: p99_ms < 100 · c=1 n=100 | failure threshold",
				"svc | requests succeeded · c=1 n=100 | pass",
				"other | requests succeeded · c=1 n=100 | pass",
			},
		},
		{
			name:       "an aborted run fails its threshold with the reason",
			thresholds: []string{"p99_ms < 1000"},
			change: func(_ *job.Job, runs []job.Run) []job.Run {
				runs[0].Aborted, runs[0].AbortedBy, runs[0].AbortReason = true, "p99_ms < 1000", "p99_ms 1500 >= 1000 after 200 requests"
				return runs
			},
			want: []string{
				"svc | p99_ms < 1000 · c=1 n=100 | failure threshold",
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | p99_ms < 1000 · c=2 n=100 | pass",
				"svc | requests succeeded · c=2 n=100 | pass",
			},
		},
		{
			name:       "a cell where nothing succeeded is an error, and so is its latency",
			thresholds: []string{"p99_ms < 1000", "rps > 1"},
			change: func(_ *job.Job, runs []job.Run) []job.Run {
				for i := range runs {
					if runs[i].Point == 1 {
						runs[i].Result = deadResult(runs[i].Result)
					}
				}
				return runs
			},
			want: []string{
				"svc | p99_ms < 1000 · c=1 n=100 | pass",
				"svc | rps > 1 · c=1 n=100 | pass",
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | p99_ms < 1000 · c=2 n=100 | error no_value",
				"svc | rps > 1 · c=2 n=100 | failure threshold",
				"svc | requests succeeded · c=2 n=100 | error no_success",
			},
		},
		{
			name:       "a failed job: the cells it never ran are errors",
			thresholds: []string{"p99_ms < 1000"},
			change: func(j *job.Job, runs []job.Run) []job.Run {
				j.Status, j.Error = job.StatusFailed, "the worker lost its lease"
				return keepPoint(runs, 0)
			},
			want: []string{
				"svc | p99_ms < 1000 · c=1 n=100 | pass",
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | p99_ms < 1000 · c=2 n=100 | error job_failed",
				"svc | requests succeeded · c=2 n=100 | error job_failed",
			},
		},
		{
			name: "a failed job whose cells all ran: the job's error is a case",
			change: func(j *job.Job, runs []job.Run) []job.Run {
				j.Status, j.Error = job.StatusFailed, "could not store the verdict"
				return runs
			},
			want: []string{
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | requests succeeded · c=2 n=100 | pass",
				"junit | job | error job_failed",
			},
		},
		{
			name: "a canceled job: the cells it never ran are skipped",
			change: func(j *job.Job, runs []job.Run) []job.Run {
				j.Status = job.StatusCanceled
				return keepPoint(runs, 0)
			},
			want: []string{"svc | requests succeeded · c=1 n=100 | pass", "svc | requests succeeded · c=2 n=100 | skipped"},
		},
		{
			name:       "a threshold that could not be judged (no baseline job) is an error in every cell it names",
			thresholds: []string{"rps >= 0.95 * baseline.rps"},
			want: []string{
				"svc | rps >= 0.95 * baseline.rps · c=1 n=100 | error baseline",
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | rps >= 0.95 * baseline.rps · c=2 n=100 | error baseline",
				"svc | requests succeeded · c=2 n=100 | pass",
			},
		},
		{
			name:       "a stored threshold that no longer parses is an error in every cell",
			thresholds: []string{"p42_ms < 1"},
			want: []string{
				"svc | p42_ms < 1 · c=1 n=100 | error invalid_threshold",
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | p42_ms < 1 · c=2 n=100 | error invalid_threshold",
				"svc | requests succeeded · c=2 n=100 | pass",
			},
		},
		{
			name: "the trend's failure is a case of its own",
			change: func(j *job.Job, runs []job.Run) []job.Run {
				j.Spec.Trend = &job.Trend{Metric: "p99_ms"}
				return runs
			},
			edit: func(a *job.Analysis) {
				bound, median := 110.0, 100.0
				a.Verdict = job.VerdictResult{Result: job.VerdictFail, Failures: []job.ThresholdFailure{{
					Threshold: (&job.Trend{Metric: "p99_ms"}).WithDefaults().String(), Target: "svc", Point: 1, Concurrency: 2, Requests: 100,
					Value: 126, Baseline: &median, Bound: &bound, Reason: "p99_ms 126 is 26 % above the median 100 of 5 jobs",
				}}}
			},
			want: []string{
				"svc | requests succeeded · c=1 n=100 | pass",
				"svc | requests succeeded · c=2 n=100 | pass",
				"svc | " + (&job.Trend{Metric: "p99_ms"}).WithDefaults().String() + " · c=2 n=100 | failure trend",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, runs := junitJob(tt.thresholds...)
			if tt.change != nil {
				runs = tt.change(j, runs)
			}
			a := analysis.Analyze(j.Spec, runs)
			if tt.edit != nil {
				tt.edit(&a)
			}
			doc, raw := renderJUnit(t, j, runs, a)
			got := cases(t, doc)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("cases:\n%s\nwant:\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"), raw)
			}
		})
	}
}

// deadResult is r as a run in which every connection was refused.
func deadResult(r *abreport.Report) *abreport.Report {
	d := *r
	d.CompleteRequests, d.FailedRequests, d.Non2xxResponses = 0, 100, 0
	d.Failed = abreport.Failures{Connect: 100}
	d.RequestsPerSecond, d.StatusCodes = 0, nil
	return &d
}

func keepPoint(runs []job.Run, point int) []job.Run {
	var out []job.Run
	for _, r := range runs {
		if r.Point == point {
			out = append(out, r)
		}
	}
	return out
}

// TestJUnitFailureNamesValueAndBound: a broken threshold's failure says
// what was measured, the bound and over how many repeats; a relative one
// also the baseline and the test that decided; an aborted run the abort's
// reason. The suite's properties carry each cell's means, and the times
// are the runs' in seconds.
func TestJUnitFailureNamesValueAndBound(t *testing.T) {
	j, runs := junitJob("p99_ms < 100")
	runs[1].Aborted, runs[1].AbortedBy, runs[1].AbortReason = true, "p99_ms < 100", "p99_ms 150 >= 100 after 200 requests"
	doc, _ := renderJUnit(t, j, runs, analysis.Analyze(j.Spec, runs))
	s := doc.Suites[0]
	var msgs []string
	for _, c := range s.Cases {
		if c.Failure != nil {
			msgs = append(msgs, string(c.Failure.Message))
			if !strings.Contains(string(c.Failure.Details), "cell: "+strings.TrimPrefix(string(c.Name), "p99_ms < 100 · ")) {
				t.Errorf("details %q do not name the cell of %q", c.Failure.Details, c.Name)
			}
		}
		if c.Time != 2 {
			t.Errorf("case %q time = %v, want 2 (two runs of 1 s)", c.Name, c.Time)
		}
	}
	// The schedule interleaves the points, so runs[1] is c=2's first repeat.
	want := []string{"p99_ms was 126.276 ms, want < 100 ms (mean of 2 repeats)", "the run was aborted: p99_ms 150 >= 100 after 200 requests"}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("failure messages:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[string(p.Name)] = string(p.Value)
	}
	for name, want := range map[string]string{"job_id": "job_junit", "job_status": "succeeded", "url": "http://127.0.0.1:8081/",
		"c=1 n=100 repeats": "2", "c=1 n=100 rps": "19.8", "c=1 n=100 p99_ms": "126.276", "c=2 n=100 failed_ratio": "0"} {
		if props[name] != want {
			t.Errorf("property %q = %q, want %q (all: %v)", name, props[name], want, props)
		}
	}
	if s.Time != 4 || doc.Time != 10 || s.Timestamp != "2026-03-01T12:00:00" {
		t.Errorf("times: suite %v at %q, job %v; want 4 (four runs of 1 s) at 2026-03-01T12:00:00, 10 (the job's start to end)", s.Time, s.Timestamp, doc.Time)
	}

	// A relative threshold: the baseline's value, the bound and the test.
	j, runs = junitJob("rps >= 0.95 * baseline.rps")
	a := analysis.Analyze(j.Spec, runs)
	base, bound, p := 25.0, 23.75, 0.004
	a.Verdict = job.VerdictResult{Result: job.VerdictFail, Failures: []job.ThresholdFailure{{
		Threshold: "rps >= 0.95 * baseline.rps", Target: "svc", Point: 0, Concurrency: 1, Requests: 100, Value: 19.8,
		BaselineJob: "job_main", Baseline: &base, Bound: &bound,
		Significance: &job.Significance{P: &p, Significant: true, Conclusive: true, NBase: 3, N: 2, Text: "-16.63 % [-20.1, -13.2] (p=0.004)"},
	}}}
	doc, _ = renderJUnit(t, j, runs, a)
	got := string(doc.Suites[0].Cases[0].Failure.Message)
	if want := "rps was 19.8 req/s, want >= 23.75 req/s (mean of 2 repeats); the bound is 0.95 * baseline.rps, with baseline.rps = 25 in job job_main; -16.63 % [-20.1, -13.2] (p=0.004), 2 vs 3 repeats"; got != want {
		t.Errorf("relative failure message:\n%s\nwant:\n%s", got, want)
	}
}

// hostileTexts are names and messages a report must carry without
// breaking the document: markup, the CDATA end, XML 1.0's forbidden
// characters, bytes that are not UTF-8, and a long line.
var hostileTexts = []string{
	`<script>alert("x")</script> & 'quotes'`,
	"]]> ]]]]><![CDATA[",
	"nul \x00 bell \x07 escape \x1b vertical tab \v form feed \f",
	"not utf-8: \xff\xfe\xc3",
	"\uFFFE\uFFFF in the BMP's non-characters",
	"tab\tnewline\ncarriage return\r",
	"<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e \"boom\">]>&e;",
	strings.Repeat("long ", 2000),
}

// hostileJob names the job and its target with s and fails the job with
// s as its error and as the reason of an aborted run.
func hostileJob(s string) (*job.Job, []job.Run) {
	j, _ := junitJob()
	j.Spec.Name = s
	j.Spec.Targets[0].Name = s
	j.Spec.Thresholds = job.Thresholds(s+": p99_ms < 100", "p99_ms < 1000")
	runs := fixtureRuns(j)
	j.Status, j.Error = job.StatusFailed, "target said: "+s
	runs[0].Aborted, runs[0].AbortedBy, runs[0].AbortReason = true, "p99_ms < 1000", s
	return j, keepPoint(runs, 0)
}

// TestJUnitHostileText: whatever a target's name, a job's error or an
// abort's reason holds, the document is well-formed, valid against the
// schema, and says the text back with only XML's forbidden characters
// replaced by Go escapes.
func TestJUnitHostileText(t *testing.T) {
	for _, s := range hostileTexts {
		t.Run(strings.ToValidUTF8(s[:min(len(s), 20)], "?"), func(t *testing.T) {
			j, runs := hostileJob(s)
			doc, raw := renderJUnit(t, j, runs, analysis.Analyze(j.Spec, runs))
			checkHostile(t, s, doc, raw)
		})
	}
	if got, want := cleanXMLText("a\x00b\xffc\uFFFEd\te"), `a\x00b\xffc\ufffed`+"\te"; got != want {
		t.Errorf("cleanXMLText = %q, want %q", got, want)
	}
}

func checkHostile(t *testing.T, s string, doc junitSuites, raw []byte) {
	t.Helper()
	want := cleanXMLText(s)
	if string(doc.Name) != want || len(doc.Suites) == 0 || string(doc.Suites[0].Name) != want {
		t.Fatalf("names read back %q and %d suites, want %q", doc.Name, len(doc.Suites), want)
	}
	var errs, aborts int
	for _, c := range doc.Suites[0].Cases {
		if c.Error != nil && strings.HasSuffix(string(c.Error.Message), want) {
			errs++
		}
		if c.Failure != nil && string(c.Failure.Message) == "the run was aborted: "+want {
			aborts++
		}
	}
	if errs == 0 || aborts != 1 {
		t.Errorf("%d errors end with the job's error, %d failures carry the abort's reason; want some and 1\n%.3000s", errs, aborts, raw)
	}
}

// FuzzJUnitText: any text as the job's and target's name, the job's error
// and an abort's reason still gives a well-formed document that says it
// back (xmllint runs on the seeds, in TestJUnitHostileText).
func FuzzJUnitText(f *testing.F) {
	for _, s := range hostileTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, ":<>=!") {
			// The name must stay a threshold's target: "s: p99_ms < 100".
			s = "x" + strings.NewReplacer(":", "", "<", "", ">", "", "=", "", "!", "").Replace(s)
		}
		j, runs := hostileJob(s)
		var buf bytes.Buffer
		if err := Write(&buf, FormatJUnit, j, runs, analysis.Analyze(j.Spec, runs)); err != nil {
			t.Fatal(err)
		}
		var doc junitSuites
		if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, buf.Bytes())
		}
		checkHostile(t, s, doc, buf.Bytes())
	})
}

// TestJUnitParsedByNPM: a JUnit reader from npm counts the fixture's
// cases and failures as the document states them.
func TestJUnitParsedByNPM(t *testing.T) {
	j, runs := junitJob("p99_ms < 100", "failed_ratio < 0.01")
	_, raw := renderJUnit(t, j, runs, analysis.Analyze(j.Spec, runs))
	r := junittest.Parse(t, raw)
	if r.Total != 6 || r.Failed != 2 || r.Passed != 4 || len(r.Suites) != 1 || len(r.Suites[0].Cases) != 6 {
		t.Fatalf("parsed %+v, want 6 tests, 2 failed, 4 passed in one suite", r)
	}
	fails := 0
	for _, c := range r.Suites[0].Cases {
		if c.Status == "FAIL" {
			fails++
			if !strings.HasPrefix(c.Failure, "p99_ms was 126.276 ms, want < 100 ms") || c.DurationMs != 2000 {
				t.Errorf("failing case %+v, want the value and the bound, 2 s", c)
			}
		}
	}
	if fails != 2 || r.Suites[0].Metadata["c=2 n=100 p99_ms"] == "" {
		t.Errorf("%d failing cases, properties %v; want 2 and each cell's p99_ms", fails, r.Suites[0].Metadata)
	}
}
