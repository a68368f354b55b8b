package job

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/google/go-cmp/cmp"
)

func TestParseRelativeThreshold(t *testing.T) {
	tests := []struct {
		in   string
		want Threshold
	}{
		{"rps >= 0.95 * baseline.rps", Threshold{Metric: "rps", Op: ">=", Baseline: "rps", Factor: 0.95}},
		{"p99_ms <= 1.10 * baseline.p99_ms", Threshold{Metric: "p99_ms", Op: "<=", Baseline: "p99_ms", Factor: 1.1}},
		{"p99_ms <= baseline.p99_ms + 5", Threshold{Metric: "p99_ms", Op: "<=", Baseline: "p99_ms", Factor: 1, Offset: 5}},
		{"rps > baseline.rps - 10", Threshold{Metric: "rps", Op: ">", Baseline: "rps", Factor: 1, Offset: -10}},
		{"rps >= baseline.rps", Threshold{Metric: "rps", Op: ">=", Baseline: "rps", Factor: 1}},
		{"rps>=baseline.rps*0.9", Threshold{Metric: "rps", Op: ">=", Baseline: "rps", Factor: 0.9}},
		{"p50_ms < 1.2*baseline.p50_ms+0.5", Threshold{Metric: "p50_ms", Op: "<", Baseline: "p50_ms", Factor: 1.2, Offset: 0.5}},
		{"failed == baseline.failed", Threshold{Metric: "failed", Op: "==", Baseline: "failed", Factor: 1}},
		{"failed_ratio != 2 * baseline.failed_ratio", Threshold{Metric: "failed_ratio", Op: "!=", Baseline: "failed_ratio", Factor: 2}},
		{"mean_ms <= 1e0 * baseline.p99_ms - 1e-3", Threshold{Metric: "mean_ms", Op: "<=", Baseline: "p99_ms", Factor: 1, Offset: -1e-3}},
		{"nginx: rps >= 0.95 * baseline.rps", Threshold{Target: "nginx", Metric: "rps", Op: ">=", Baseline: "rps", Factor: 0.95}},
	}
	for _, tt := range tests {
		checkParsed(t, tt.in, tt.want)
	}
}

func TestParseRelativeThresholdRefusesBadForms(t *testing.T) {
	for _, bad := range []string{
		"rps >= baseline.rsp",                // unknown metric on the right
		"rsp >= baseline.rps",                // unknown metric on the left
		"rps >= baseline.",                   // no metric
		"rps >= 0.95 baseline.rps",           // missing *
		"rps >= 0.95 * 2 * baseline.rps",     // two factors
		"rps >= 0.95 * baseline.rps * 2",     // two factors
		"rps >= baseline.rps + ",             // offset without number
		"rps >= baseline.rps + x",            // offset not a number
		"rps >= baseline.rps / 2",            // no division
		"rps >= 0 * baseline.rps",            // factor must be positive
		"rps >= -0.5 * baseline.rps",         // negative factor
		"rps >= baseline.rps + baseline.rps", // one reference only
		"rps >= baseline.rps 5",              // trailing number
		"rps >= NaN * baseline.rps",          // not finite
	} {
		if _, err := ParseThreshold(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseThreshold(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestCompareToJSON(t *testing.T) {
	tests := []struct {
		in   string
		want CompareTo
	}{
		{`"01JC3W9Q5V1ZK2M4N6P8R0T2V4"`, CompareTo{JobID: "01JC3W9Q5V1ZK2M4N6P8R0T2V4"}},
		{`{"labels":{"branch":"main"}}`, CompareTo{Labels: map[string]string{"branch": "main"}}},
		{`{"labels":{"branch":"main"},"status":"failed"}`, CompareTo{Labels: map[string]string{"branch": "main"}, Status: StatusFailed}},
		{`{"job_id":"X1","labels":{"a":"b"}}`, CompareTo{JobID: "X1", Labels: map[string]string{"a": "b"}}},
	}
	for _, tt := range tests {
		s, err := Decode(strings.NewReader(`{"targets":[{"url":"http://127.0.0.1:1/"}],"compare_to":` + tt.in + `}`))
		if err != nil || s.CompareTo == nil {
			t.Fatalf("Decode(compare_to %s) = %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, *s.CompareTo); diff != "" {
			t.Errorf("Decode(compare_to %s) mismatch (-want +got):\n%s", tt.in, diff)
		}
		// What the API stores must read back the same.
		b, err := json.Marshal(s)
		var back Spec
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		if err != nil || !cmp.Equal(back.CompareTo, s.CompareTo) {
			t.Errorf("compare_to %s round trip = %+v, %v", tt.in, back.CompareTo, err)
		}
	}
	for _, bad := range []string{`42`, `["a"]`, `{"label":{"a":"b"}}`, `{"labels":"main"}`, `{"status":1}`} {
		_, err := Decode(strings.NewReader(`{"targets":[{"url":"http://127.0.0.1:1/"}],"compare_to":` + bad + `}`))
		var ve *errcode.Error
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Problems[0].Field, "compare_to") {
			t.Errorf("Decode(compare_to %s) = %v, want a problem under compare_to", bad, err)
		}
	}
}
