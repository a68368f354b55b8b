package job

import (
	"testing"

	"github.com/benchq/benchq/internal/errcode"
)

func pct(v float64) *float64 { return &v }

func TestValidateTrend(t *testing.T) {
	tests := []struct {
		name  string
		trend Trend
		noTpl bool
		field string // "" : valid
	}{
		{"valid", Trend{Metric: "p99", MaxIncreasePct: pct(10), Window: 10, Branch: "main"}, false, ""},
		{"unknown metric", Trend{Metric: "p42", MaxIncreasePct: pct(10)}, false, "trend.metric"},
		{"no limit", Trend{Metric: "rps"}, false, "trend"},
		{"negative pct", Trend{Metric: "rps", MaxDecreasePct: pct(-1)}, false, "trend.max_decrease_pct"},
		{"window too big", Trend{Metric: "rps", MaxDecreasePct: pct(5), Window: 1000}, false, "trend.window"},
		{"min_runs above window", Trend{Metric: "rps", MaxDecreasePct: pct(5), Window: 4, MinRuns: 5}, false, "trend.min_runs"},
		{"unknown target", Trend{Metric: "rps", MaxDecreasePct: pct(5), Target: "zz"}, false, "trend.target"},
		{"no template label", Trend{Metric: "rps", MaxDecreasePct: pct(5)}, true, "trend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			if !tt.noTpl {
				s.Labels = map[string]string{LabelTemplate: "checkout"}
			}
			s.Trend = &tt.trend
			err := s.Validate(Limits{}, nil)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !hasField(err, tt.field) {
				t.Fatalf("Validate = %v, want a problem at %s", err, tt.field)
			}
		})
	}
}

func hasField(err error, field string) bool {
	ve, ok := err.(*errcode.Error)
	if !ok {
		return false
	}
	for _, p := range ve.Problems {
		if p.Field == field {
			return true
		}
	}
	return false
}
