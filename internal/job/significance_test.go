package job

import (
	"strings"
	"testing"
)

func TestSignificance(t *testing.T) {
	tests := []struct {
		name             string
		base, x          []float64
		pct              float64
		ok               bool
		wantSignificant  bool
		wantConclusive   bool
		wantNilP         bool
		wantTextHasPrefx string
	}{
		{"apart with 5 each", []float64{100, 101, 102, 103, 104}, []float64{80, 81, 82, 83, 84}, -20, true, true, true, false, "-20.00 % (p=0.008)"},
		{"overlapping with 5 each", []float64{100, 90, 110, 95, 105}, []float64{101, 91, 109, 96, 104}, 0.2, true, false, true, false, "~ (no significant difference, p="},
		{"one repeat each", []float64{100}, []float64{50}, -50, true, false, false, false, "~ (nothing can be concluded: 1 vs 1 repeats, the test needs 4 per side)"},
		{"three apart each", []float64{1, 2, 3}, []float64{10, 11, 12}, 900, true, false, false, false, "~ (nothing can be concluded"},
		{"four apart each", []float64{1, 2, 3, 4}, []float64{10, 11, 12, 13}, 900, true, true, true, false, "+900.00 % (p=0.03)"},
		{"eight apart each", []float64{1, 2, 3, 4, 5, 6, 7, 8}, []float64{10, 11, 12, 13, 14, 15, 16, 17}, 900, true, true, true, false, "+900.00 % (p<0.001)"},
		{"no percentage", []float64{0, 0}, []float64{1, 1}, 0, false, false, false, true, "n/a"},
		{"empty side", nil, []float64{1, 2}, 0, true, false, false, true, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := significance(tt.base, tt.x, tt.pct, tt.ok)
			if s.Significant != tt.wantSignificant || s.Conclusive != tt.wantConclusive || (s.P == nil) != tt.wantNilP {
				t.Errorf("got %+v", s)
			}
			if !strings.HasPrefix(s.Text, tt.wantTextHasPrefx) {
				t.Errorf("text %q, want prefix %q", s.Text, tt.wantTextHasPrefx)
			}
			if s.NBase != len(tt.base) || s.N != len(tt.x) {
				t.Errorf("n %d/%d, want %d/%d", s.NBase, s.N, len(tt.base), len(tt.x))
			}
		})
	}
	if minRepeatsForSignificance != 4 {
		t.Errorf("minRepeatsForSignificance = %d, want 4 at alpha 0.05", minRepeatsForSignificance)
	}
}
