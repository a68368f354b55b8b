package apikey

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

func TestQuotaOver(t *testing.T) {
	def := Quota{MaxConcurrency: 100, MaxRequests: 1000, MaxDuration: time.Minute, MaxRuns: 50, MaxActiveJobs: 10, SubmissionsPerMinute: 60}
	tests := []struct {
		name string
		q    Quota
		want Quota
	}{
		{"empty takes every default", Quota{}, def},
		{"set fields win, lower or higher", Quota{MaxConcurrency: 4, MaxActiveJobs: 50, MaxDuration: time.Hour},
			Quota{MaxConcurrency: 4, MaxRequests: 1000, MaxDuration: time.Hour, MaxRuns: 50, MaxActiveJobs: 50, SubmissionsPerMinute: 60}},
		{"all set", Quota{1, 2, time.Second, 3, 4, 5}, Quota{1, 2, time.Second, 3, 4, 5}},
	}
	for _, tt := range tests {
		if got := tt.q.Over(def); got != tt.want {
			t.Errorf("%s: Over = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestQuotaLimits(t *testing.T) {
	base := job.DefaultLimits()
	got := Quota{MaxConcurrency: 8, MaxDuration: 30 * time.Second, MaxActiveJobs: 2}.Limits(base)
	want := base
	want.MaxConcurrency, want.MaxDuration = 8, 30*time.Second
	if got != want {
		t.Errorf("Limits = %+v, want %+v: only the per-run fields the quota sets replace the base", got, want)
	}
	if got := (Quota{}).Limits(base); got != base {
		t.Errorf("empty quota Limits = %+v, want the base unchanged", got)
	}
}

func TestQuotaStringAndValidate(t *testing.T) {
	if s := (Quota{}).String(); s != "defaults" {
		t.Errorf("empty quota String = %q, want defaults", s)
	}
	if s := (Quota{MaxConcurrency: 8, MaxDuration: time.Minute, SubmissionsPerMinute: 5}).String(); s != "concurrency=8 duration=1m0s submissions/min=5" {
		t.Errorf("String = %q", s)
	}
	if err := (Quota{MaxRuns: -1, MaxActiveJobs: -2}).Validate(); err == nil {
		t.Error("Validate(negative) = nil, want an error")
	}
	if err := (Quota{MaxRuns: 1}).Validate(); err != nil {
		t.Errorf("Validate(positive) = %v", err)
	}
}
