package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

func TestSignificance(t *testing.T) {
	tests := []struct {
		name            string
		base, x         []float64
		pct             float64
		ok              bool
		wantSignificant bool
		wantConclusive  bool
		wantNilP        bool
		wantNilPU       bool
		wantText        string // a prefix of Text
	}{
		{"apart with 5 each", []float64{100, 101, 102, 103, 104}, []float64{80, 81, 82, 83, 84}, -20, true, true, true, false, false, "-20.00 % [-21.6, -17.5] (p<0.001)"},
		{"overlapping with 5 each", []float64{100, 90, 110, 95, 105}, []float64{101, 91, 109, 96, 104}, 0.2, true, false, true, false, false, "~ +0.20 % [-10.1, +11.8] (p=0.96)"},
		{"one repeat each", []float64{100}, []float64{50}, -50, true, false, false, true, true, "~ -50.00 % (1 vs 1 repeats: an interval needs 2 per side)"},
		{"two apart each", []float64{100, 102}, []float64{300, 306}, 200, true, true, true, false, true, "+200.00 % [+182.5, +218.6] (p<0.001)"},
		{"three apart each: a U test could not tell", []float64{1000, 1010, 990}, []float64{1120, 1130, 1110}, 12, true, true, true, false, true, "+12.00 % [+9.6, +14.4] (p<0.001)"},
		{"three overlapping", []float64{100, 110, 90}, []float64{105, 95, 115}, 5, true, false, true, false, true, "~ +5.00 % [-15.9, +31.2] (p=0.57)"},
		{"unequal sizes use Welch", []float64{100, 101, 102, 103}, []float64{110, 111}, 9, true, true, true, false, true, "+9.00 % ["},
		{"counts with a zero compare by difference", []float64{0, 1, 2}, []float64{4, 5, 6}, 400, true, true, true, false, true, "+400.00 % [+173.3, +626.7] (p=0.008)"},
		{"identical", []float64{5, 5}, []float64{5, 5}, 0, true, false, true, false, true, "~ +0.00 % [+0.00, +0.00] (p=1.00)"},
		{"no percentage", []float64{0, 0}, []float64{1, 1}, 0, false, false, false, true, true, "n/a"},
		{"empty side", nil, []float64{1, 2}, 0, true, false, false, true, true, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := significance(tt.base, tt.x, tt.pct, tt.ok)
			if s.Significant != tt.wantSignificant || s.Conclusive != tt.wantConclusive || (s.P == nil) != tt.wantNilP || (s.PU == nil) != tt.wantNilPU {
				t.Errorf("got %+v", s)
			}
			if !strings.HasPrefix(s.Text, tt.wantText) {
				t.Errorf("text %q, want prefix %q", s.Text, tt.wantText)
			}
			if s.NBase != len(tt.base) || s.N != len(tt.x) {
				t.Errorf("n %d/%d, want %d/%d", s.NBase, s.N, len(tt.base), len(tt.x))
			}
			if s.Conclusive && s.Significant == (*s.CILowPct <= 0 && *s.CIHighPct >= 0) {
				t.Errorf("significant = %v with interval [%g, %g]: '~' must mean the interval holds 0", s.Significant, *s.CILowPct, *s.CIHighPct)
			}
		})
	}
	if minRepeatsForUTest != 4 {
		t.Errorf("minRepeatsForUTest = %d, want 4 at alpha 0.05", minRepeatsForUTest)
	}
}

// TestIntervalCoverage draws log-normal repeats (as req/s of repeated
// runs spread) with a known ratio of means, 1.2, and counts how often the
// 95 % interval holds it: between 93 % and 97 % at every spread and
// repeat count a job uses, equal sizes and not.
func TestIntervalCoverage(t *testing.T) {
	const trials, ratio = 4000, 1.2
	r := rand.New(rand.NewPCG(24, 95))
	for _, cv := range []float64{0.02, 0.10, 0.30} {
		sigma := math.Sqrt(math.Log(1 + cv*cv)) // the log-normal whose CV is cv
		for _, n := range [][2]int{{2, 2}, {3, 3}, {5, 5}, {10, 10}, {3, 5}, {10, 4}} {
			t.Run(fmt.Sprintf("cv=%g n=%dv%d", cv, n[0], n[1]), func(t *testing.T) {
				held := 0
				for range trials {
					base, x := make([]float64, n[0]), make([]float64, n[1])
					for i := range base {
						base[i] = 1000 * math.Exp(sigma*r.NormFloat64())
					}
					for i := range x {
						x[i] = ratio * 1000 * math.Exp(sigma*r.NormFloat64())
					}
					iv, ok := effectInterval(base, x)
					if !ok {
						t.Fatal("no interval")
					}
					if truth := (ratio - 1) * 100; iv.lowPct <= truth && truth <= iv.highPct {
						held++
					}
				}
				if c := float64(held) / trials; c < 0.93 || c > 0.97 {
					t.Errorf("coverage %.3f, want 0.93-0.97", c)
				} else {
					t.Logf("coverage %.3f", c)
				}
			})
		}
	}
}

func TestControlFalseDiscovery(t *testing.T) {
	mk := func(p float64) difference {
		lo, hi := 1.0, 5.0
		s := &job.Significance{P: &p, CILowPct: &lo, CIHighPct: &hi, Conclusive: true, Significant: p < SignificanceAlpha}
		s.Text = describe(*s, 3, 0)
		return difference{s, 3}
	}
	// Benjamini-Hochberg at 0.05 over 5: sorted p 0.001, 0.012, 0.03,
	// 0.035, 0.6 against 0.01, 0.02, 0.03, 0.04, 0.05: the largest k with
	// p(k) <= k/5*0.05 is 4, so the first four stay significant.
	sigs := []difference{mk(0.035), mk(0.001), mk(0.6), mk(0.03), mk(0.012), {&job.Significance{Text: "n/a"}, 0}}
	controlFalseDiscovery(sigs)
	for i, want := range []bool{true, true, false, true, true, false} {
		if sigs[i].sig.Significant != want {
			t.Errorf("sig %d significant = %v, want %v", i, sigs[i].sig.Significant, want)
		}
	}
	if q := *sigs[0].sig.PAdjusted; math.Abs(q-0.04375) > 1e-12 {
		t.Errorf("q of p=0.035 = %g, want 0.035*5/4", q)
	}
	if sigs[5].sig.PAdjusted != nil {
		t.Error("an untested comparison got an adjusted p")
	}

	// Three at p = 0.04 among ten: alone each would be significant, among
	// the others none is, and the text says why.
	sigs = nil
	for i := range 10 {
		p := 0.04
		if i >= 3 {
			p = 0.5
		}
		sigs = append(sigs, mk(p))
	}
	controlFalseDiscovery(sigs)
	if s := sigs[0].sig; s.Significant || !strings.Contains(s.Text, "not significant among 10 comparisons") || !strings.HasPrefix(s.Text, "~ +3.00 % [+1.0, +5.0]") {
		t.Errorf("after control %+v", *s)
	}
}
