package apikey

import (
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

func TestQuotaOver(t *testing.T) {
	def := Quota{MaxConcurrency: 100, MaxRequests: 1000, MaxDuration: time.Minute, MaxRuns: 50, MaxActiveJobs: 10, SubmissionsPerMinute: 60,
		MaxTemplates: 100, MaxTemplateBytes: 4 << 20, MaxSchedules: 50, MaxPins: 100}
	tests := []struct {
		name string
		q    Quota
		want Quota
	}{
		{"empty takes every default", Quota{}, def},
		{"set fields win, lower or higher", Quota{MaxConcurrency: 4, MaxActiveJobs: 50, MaxDuration: time.Hour},
			Quota{MaxConcurrency: 4, MaxRequests: 1000, MaxDuration: time.Hour, MaxRuns: 50, MaxActiveJobs: 50, SubmissionsPerMinute: 60,
				MaxTemplates: 100, MaxTemplateBytes: 4 << 20, MaxSchedules: 50, MaxPins: 100}},
		{"storage limits set", Quota{MaxTemplates: 3, MaxTemplateBytes: 1000, MaxSchedules: 1, MaxPins: 2},
			Quota{MaxConcurrency: 100, MaxRequests: 1000, MaxDuration: time.Minute, MaxRuns: 50, MaxActiveJobs: 10, SubmissionsPerMinute: 60,
				MaxTemplates: 3, MaxTemplateBytes: 1000, MaxSchedules: 1, MaxPins: 2}},
		{"all set", Quota{1, 2, time.Second, 3, 4, 5, 6, 7, 8, 9}, Quota{1, 2, time.Second, 3, 4, 5, 6, 7, 8, 9}},
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
	if err := (Quota{MaxTemplateBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "max-template-bytes") {
		t.Errorf("Validate(negative template bytes) = %v, want an error naming max-template-bytes", err)
	}
	if s := (Quota{MaxTemplates: 5, MaxTemplateBytes: 4096, MaxSchedules: 2, MaxPins: 3}).String(); s != "templates=5 template-bytes=4096 schedules=2 pins=3" {
		t.Errorf("String of the storage limits = %q", s)
	}
	if err := (Quota{MaxRuns: 1}).Validate(); err != nil {
		t.Errorf("Validate(positive) = %v", err)
	}
}
