package job_test

import (
	"errors"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

func TestComparisonsValidation(t *testing.T) {
	tests := []struct {
		name   string
		pairs  []job.ComparisonPair
		fields []string
	}{
		{"unknown target", []job.ComparisonPair{{"nginx", "apache"}}, []string{"comparisons[0].target"}},
		{"unknown baseline", []job.ComparisonPair{{"apache", "iis"}}, []string{"comparisons[0].baseline"}},
		{"itself", []job.ComparisonPair{{"apache", "apache"}}, []string{"comparisons[0]"}},
		{"too many", make([]job.ComparisonPair, job.MaxComparisonPairs+1), []string{"comparisons"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.SweepSpec([]int{1}, "apache", "lighttpd")
			s.Comparisons = tt.pairs
			err := s.Validate(job.Limits{}, nil)
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
	s := jobtest.SweepSpec([]int{1}, "apache", "lighttpd")
	s.Comparisons = []job.ComparisonPair{{"lighttpd", "apache"}}
	if err := s.Validate(job.Limits{}, nil); err != nil {
		t.Errorf("a valid pair: %v", err)
	}
}

func TestValidateCompareTo(t *testing.T) {
	base := func() job.Spec { return jobtest.SweepSpec([]int{1}, "a") }
	tests := []struct {
		name  string
		edit  func(*job.Spec)
		field string // "" = valid
	}{
		{"job id", func(s *job.Spec) { s.CompareTo = &job.CompareTo{JobID: "01JC3W9Q5V1ZK2M4N6P8R0T2V4"} }, ""},
		{"selector", func(s *job.Spec) { s.CompareTo = &job.CompareTo{Labels: map[string]string{"branch": "main"}} }, ""},
		{"relative threshold with compare_to", func(s *job.Spec) {
			s.CompareTo, s.Thresholds = &job.CompareTo{JobID: "X"}, job.Thresholds("rps >= 0.95 * baseline.rps")
		}, ""},
		{"relative threshold without compare_to", func(s *job.Spec) {
			s.Thresholds = job.Thresholds("rps > 1", "p99_ms <= 1.1 * baseline.p99_ms")
		}, "thresholds[1]"},
		{"empty job id", func(s *job.Spec) { s.CompareTo = &job.CompareTo{JobID: ""} }, ""}, // defaults to the newest succeeded job
		{"blank job id", func(s *job.Spec) { s.CompareTo = &job.CompareTo{JobID: " X"} }, "compare_to"},
		{"bad status", func(s *job.Spec) { s.CompareTo = &job.CompareTo{Status: "done"} }, "compare_to.status"},
		{"bad label", func(s *job.Spec) { s.CompareTo = &job.CompareTo{Labels: map[string]string{"a b": "c"}} }, `compare_to.labels["a b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.edit(&s)
			err := s.WithDefaults().Validate(job.Limits{}, nil)
			var ve *errcode.Error
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.field != "" && (!errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != tt.field):
				t.Errorf("Validate = %v, want one problem at %s", err, tt.field)
			}
		})
	}
	if got := (job.Spec{CompareTo: &job.CompareTo{Labels: map[string]string{"b": "m"}}}).WithDefaults().CompareTo.Status; got != job.StatusSucceeded {
		t.Errorf("selector status default = %q, want succeeded", got)
	}
	if got := (job.Spec{CompareTo: &job.CompareTo{JobID: "X"}}).WithDefaults().CompareTo.Status; got != "" {
		t.Errorf("job id status default = %q, want none (any status)", got)
	}
}
