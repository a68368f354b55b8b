package job

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/errcode"
)

// sweepSpec is targets × concurrency × one duration, one repeat.
func sweepSpec(conc []int, targets ...string) Spec {
	s := Spec{Sweep: Sweep{Concurrency: conc, Duration: []Duration{Duration(10 * time.Second)}, Repeats: 1}}
	for i, name := range targets {
		s.Targets = append(s.Targets, Target{Name: name, URL: fmt.Sprintf("http://127.0.0.1:%d/", 18080+i)})
	}
	return s
}

func TestComparisonsValidation(t *testing.T) {
	tests := []struct {
		name   string
		pairs  []ComparisonPair
		fields []string
	}{
		{"unknown target", []ComparisonPair{{"nginx", "apache"}}, []string{"comparisons[0].target"}},
		{"unknown baseline", []ComparisonPair{{"apache", "iis"}}, []string{"comparisons[0].baseline"}},
		{"itself", []ComparisonPair{{"apache", "apache"}}, []string{"comparisons[0]"}},
		{"too many", make([]ComparisonPair, maxComparisonPairs+1), []string{"comparisons"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sweepSpec([]int{1}, "apache", "lighttpd")
			s.Comparisons = tt.pairs
			err := s.Validate(Limits{}, nil)
			var ve *errcode.Error
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a ValidationError", err)
			}
			for _, f := range tt.fields {
				found := false
				for _, p := range ve.Problems {
					found = found || p.Field == f
				}
				if !found {
					t.Errorf("problems %+v do not name %s", ve.Problems, f)
				}
			}
		})
	}
	s := sweepSpec([]int{1}, "apache", "lighttpd")
	s.Comparisons = []ComparisonPair{{"lighttpd", "apache"}}
	if err := s.Validate(Limits{}, nil); err != nil {
		t.Errorf("a valid pair: %v", err)
	}
}
