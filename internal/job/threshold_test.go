package job

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/metric"
	"github.com/benchq/benchq/internal/testservers"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in   string
		want Threshold
	}{
		{"rps >= 1000", Threshold{Metric: "rps", Op: ">=", Value: 1000}},
		{"p95_ms<200", Threshold{Metric: "p95_ms", Op: "<", Value: 200}},
		{"failed_ratio <= 0.01", Threshold{Metric: "failed_ratio", Op: "<=", Value: 0.01}},
		{"non_2xx == 0", Threshold{Metric: "non_2xx", Op: "==", Value: 0}},
		{"failed != 3", Threshold{Metric: "failed", Op: "!=", Value: 3}},
		{"lighttpd: p99_ms > 50", Threshold{Target: "lighttpd", Metric: "p99_ms", Op: ">", Value: 50}},
		{"p99.9_ms < 20", Threshold{Metric: "p99.9_ms", Op: "<", Value: 20}},
		{"p99.99_ms <= 1.5 * baseline.p99.99_ms", Threshold{Metric: "p99.99_ms", Op: "<=", Baseline: "p99.99_ms", Factor: 1.5}},
	}
	for _, tt := range tests {
		checkParsed(t, tt.in, tt.want)
	}
	for _, bad := range []string{"", "rps", "rps = 5", "rps => 5", "rsp > 5", "rps > fast", "rps > NaN", ": rps > 1", "rps > 1e999", "p99.5_ms < 3"} {
		if _, err := ParseThreshold(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseThreshold(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// An unknown metric never reaches Analyze: submission refuses it.
func TestValidateRefusesUnknownMetric(t *testing.T) {
	for _, th := range []string{"p97_ms < 5", "latency < 5", "a: rsp >= 1"} {
		s := validSpec()
		s.Thresholds = Thresholds("rps >= 1", th)
		err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
		var ve *errcode.Error
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &ve) || len(ve.Problems) != 1 ||
			ve.Problems[0].Field != "thresholds[1]" || !strings.Contains(ve.Problems[0].Message, "unknown metric") {
			t.Errorf("Validate(thresholds %q) = %v, want ErrInvalid at thresholds[1] naming the unknown metric", th, err)
		}
	}
}

// Every metric of the table is one a threshold and a trend may name.
func TestEveryMetricIsAThresholdMetric(t *testing.T) {
	for _, name := range metric.Names() {
		if _, err := ParseThreshold(name + " <= 1.05 * baseline." + name); err != nil {
			t.Errorf("ParseThreshold(%s relative) = %v, want nil", name, err)
		}
		s := validSpec()
		s.Labels = map[string]string{LabelTemplate: "checkout"}
		s.Trend = &Trend{Metric: name, MaxIncreasePct: pct(10)}
		if err := s.Validate(Limits{}, nil); err != nil {
			t.Errorf("Validate(trend on %s) = %v, want nil", name, err)
		}
	}
}

// checkParsed asserts that in parses to want, and that want's String
// parses to want again.
func checkParsed(t *testing.T, in string, want Threshold) {
	t.Helper()
	got, err := ParseThreshold(in)
	if err != nil || got != want {
		t.Errorf("ParseThreshold(%q) = %+v, %v, want %+v", in, got, err, want)
	}
	if again, err := ParseThreshold(got.String()); err != nil || again != got {
		t.Errorf("ParseThreshold(%q.String() = %q) = %+v, %v, want the same threshold", in, got.String(), again, err)
	}
}
