package job

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// Strings and objects mix in one list; a plain entry is written back as
// the string it was, so stored specs and API answers keep their shape.
func TestThresholdEntriesDecodeAndEncode(t *testing.T) {
	body := `{"targets": [{"url": "http://127.0.0.1:1/"}], "thresholds": [
		"p99_ms < 200",
		{"threshold": "failed_ratio < 0.01", "abort": true, "abort_after": 200},
		{"threshold": "failed < 5", "abort": "job"},
		{"threshold": "rps > 1", "abort": false}]}`
	s, err := Decode(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []ThresholdEntry{
		{Threshold: "p99_ms < 200"},
		{Threshold: "failed_ratio < 0.01", Abort: AbortRun, AbortAfter: 200},
		{Threshold: "failed < 5", Abort: AbortJob},
		{Threshold: "rps > 1"},
	}
	if diff := cmp.Diff(want, s.Thresholds); diff != "" {
		t.Fatalf("Decode thresholds mismatch (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(s.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := []any{"p99_ms < 200",
		map[string]any{"threshold": "failed_ratio < 0.01", "abort": "run", "abort_after": 200.0},
		map[string]any{"threshold": "failed < 5", "abort": "job"}, "rps > 1"}
	if diff := cmp.Diff(wantJSON, got); diff != "" {
		t.Errorf("Marshal = %s, mismatch (-want +got):\n%s", out, diff)
	}
}

func TestThresholdEntriesDecodeErrors(t *testing.T) {
	tests := []struct {
		name, entry, field, msg string
	}{
		{"number", `5`, "thresholds[0]", "want a threshold"},
		{"list", `["rps > 1"]`, "thresholds[0]", "want a threshold"},
		{"abort number", `{"threshold": "failed < 1", "abort": 1}`, "thresholds[0].abort", `want true, false, "run" or "job"`},
		{"abort_after string", `{"threshold": "failed < 1", "abort": true, "abort_after": "200"}`, "thresholds[0].abort_after", "want an integer"},
		{"unknown key", `{"threshold": "failed < 1", "abortOnFail": true}`, "thresholds[0].abortOnFail", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(`{"targets": [{"url": "http://127.0.0.1:1/"}], "thresholds": [` + tt.entry + `]}`))
			got := fields(t, err)
			if len(got) != 1 || got[0] != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Decode(%s) = %v (fields %v), want one problem at %s saying %q", tt.entry, err, got, tt.field, tt.msg)
			}
		})
	}
}

func TestValidateAbort(t *testing.T) {
	tests := []struct {
		name   string
		entry  ThresholdEntry
		shards int
		want   []string // fields; none: valid
	}{
		{"ratio run", ThresholdEntry{Threshold: "failed_ratio < 0.01", Abort: AbortRun}, 0, nil},
		{"count job", ThresholdEntry{Threshold: "a: failed <= 3", Abort: AbortJob, AbortAfter: 1}, 0, nil},
		{"non_2xx ratio", ThresholdEntry{Threshold: "non_2xx_ratio < 0.5", Abort: AbortRun, AbortAfter: 1000}, 0, nil},
		{"bad scope", ThresholdEntry{Threshold: "failed_ratio < 0.01", Abort: "all"}, 0, []string{"thresholds[0].abort"}},
		{"latency", ThresholdEntry{Threshold: "p99_ms < 50", Abort: AbortRun}, 0, []string{"thresholds[0].abort"}},
		{"lower bound", ThresholdEntry{Threshold: "failed > 1", Abort: AbortRun}, 0, []string{"thresholds[0].abort"}},
		{"equality", ThresholdEntry{Threshold: "failed == 0", Abort: AbortRun}, 0, []string{"thresholds[0].abort"}},
		{"baseline", ThresholdEntry{Threshold: "failed_ratio <= baseline.failed_ratio", Abort: AbortRun}, 0,
			[]string{"thresholds[0].threshold", "thresholds[0].abort"}},
		{"after without abort", ThresholdEntry{Threshold: "failed < 1", AbortAfter: 50}, 0, []string{"thresholds[0].abort_after"}},
		{"after negative", ThresholdEntry{Threshold: "failed < 1", Abort: AbortRun, AbortAfter: -1}, 0, []string{"thresholds[0].abort_after"}},
		{"after huge", ThresholdEntry{Threshold: "failed < 1", Abort: AbortRun, AbortAfter: 2e9}, 0, []string{"thresholds[0].abort_after"}},
		{"syntax in object", ThresholdEntry{Threshold: "failed is high", Abort: AbortRun}, 0, []string{"thresholds[0].threshold"}},
		{"unknown target", ThresholdEntry{Threshold: "c: failed < 1", Abort: AbortRun}, 0, []string{"thresholds[0].threshold"}},
		{"sharded", ThresholdEntry{Threshold: "failed < 1", Abort: AbortRun}, 2, []string{"thresholds[0].abort"}},
		{"sharded without abort", ThresholdEntry{Threshold: "failed < 1"}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			if tt.shards > 1 {
				s.Sweep.Shards, s.Sweep.Concurrency = tt.shards, []int{4}
			}
			s.Thresholds = []ThresholdEntry{tt.entry}
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", tt.entry, err)
				}
				return
			}
			if diff := cmp.Diff(tt.want, fields(t, err)); diff != "" {
				t.Errorf("Validate(%+v) fields mismatch (-want +got):\n%s\nerror: %v", tt.entry, diff, err)
			}
		})
	}
}

func TestAbortRules(t *testing.T) {
	s := validSpec()
	s.Thresholds = []ThresholdEntry{
		{Threshold: "rps > 1"},
		{Threshold: "failed_ratio < 0.01", Abort: AbortRun},
		{Threshold: "b: failed < 3", Abort: AbortJob, AbortAfter: 10},
	}
	if got := s.AbortRules("a"); len(got) != 1 || got[0].Text != "failed_ratio < 0.01" || got[0].After != DefaultAbortAfter || got[0].Scope != AbortRun {
		t.Errorf("AbortRules(a) = %+v, want failed_ratio's rule after %d requests", got, DefaultAbortAfter)
	}
	if got := s.AbortRules("b"); len(got) != 2 || got[1].Text != "b: failed < 3" || got[1].After != 10 || got[1].Scope != AbortJob {
		t.Errorf("AbortRules(b) = %+v, want both rules, the second after 10 requests for the job", got)
	}
}

func TestAbortRuleBroken(t *testing.T) {
	rule := func(text string, after int64) AbortRule {
		th, err := ParseThreshold(text)
		if err != nil {
			t.Fatal(err)
		}
		return AbortRule{Threshold: th, Text: text, After: after}
	}
	tests := []struct {
		name   string
		rule   AbortRule
		counts RunCounts
		total  int64
		broken bool
		why    string // part of the reason
	}{
		{"half failed, too few yet", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 49, Failed: 50}, 0, false, ""},
		{"half failed at the minimum", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 50, Failed: 50}, 0, true, "failed_ratio 0.5 >= 0.01 after 100 requests (99.9 % lower bound"},
		// 2 in 100 is over 1 %, but a 1 % rate shows that often: not certain.
		{"just over, by chance", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 98, Failed: 2}, 0, false, ""},
		// 10 in 100 is far beyond what 1 % explains.
		{"far over", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 90, Failed: 10}, 0, true, "lower bound"},
		// The run has 200 requests: 2 failed of them can never get under 1 %.
		{"remaining cannot repair", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 98, Failed: 2}, 200, true, "the 100 still to come cannot bring it under"},
		{"remaining could repair", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 99, Failed: 1}, 200, false, ""},
		{"<= at the bound", rule("failed_ratio <= 0.5", 10), RunCounts{Completed: 5, Failed: 5}, 10, false, ""},
		{"none under a bound of 0", rule("non_2xx_ratio <= 0", 1), RunCounts{Completed: 723}, 0, false, ""},
		{"one over a bound of 0", rule("non_2xx_ratio <= 0", 1), RunCounts{Completed: 723, Non2xx: 1}, 0, true, "non_2xx_ratio 0.00138 > 0"},
		{"healthy", rule("failed_ratio < 0.01", 100), RunCounts{Completed: 100000}, 0, false, ""},
		{"count reached", rule("failed < 3", 10), RunCounts{Completed: 7, Failed: 3}, 0, true, "failed 3 >= 3 after 10 requests"},
		{"count under", rule("failed <= 3", 10), RunCounts{Completed: 7, Failed: 3}, 0, false, ""},
		{"non-2xx ratio", rule("non_2xx_ratio < 0.1", 100), RunCounts{Completed: 100, Non2xx: 60}, 0, true, "non_2xx_ratio 0.6 >= 0.1"},
		{"non-2xx count", rule("non_2xx < 1", 1), RunCounts{Completed: 1, Non2xx: 1}, 0, true, "non_2xx 1 >= 1 after 1 requests"},
		{"no completed for non-2xx", rule("non_2xx_ratio < 0.1", 10), RunCounts{Failed: 20}, 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, broken := tt.rule.Broken(tt.counts, tt.total)
			if broken != tt.broken || !strings.Contains(why, tt.why) {
				t.Errorf("Broken(%+v, %d) = %q, %v; want %v with %q", tt.counts, tt.total, why, broken, tt.broken, tt.why)
			}
		})
	}
}

// A run with a warm-up is judged on what came after it.
func TestAbortWatchSkipsWarmup(t *testing.T) {
	th, _ := ParseThreshold("failed_ratio < 0.01")
	w := NewAbortWatch([]AbortRule{{Threshold: th, Text: "failed_ratio < 0.01", After: 100}}, measure.Plan{Warmup: time.Second, Duration: time.Minute})
	steps := []struct {
		s    measure.Snapshot
		stop bool
	}{
		{measure.Snapshot{Elapsed: 500 * time.Millisecond, Completed: 500, Failed: 500}, false}, // warming: not judged
		{measure.Snapshot{Elapsed: 1100 * time.Millisecond, Completed: 1000, Failed: 1000}, false},
		{measure.Snapshot{Elapsed: 2 * time.Second, Completed: 3000, Failed: 1000}, false}, // none failed since
		{measure.Snapshot{Elapsed: 3 * time.Second, Completed: 3100, Failed: 1100}, true},
	}
	for i, st := range steps {
		if why := w.Watch(st.s); (why != "") != st.stop {
			t.Fatalf("step %d: Watch(%+v) = %q, want stop %v", i, st.s, why, st.stop)
		}
	}
	if f := w.Fired(); f == nil || f.Text != "failed_ratio < 0.01" {
		t.Errorf("Fired() = %+v, want the failed_ratio rule", f)
	}
}
