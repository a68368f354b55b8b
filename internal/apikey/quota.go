package apikey

import (
	"fmt"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// Quota bounds what one key may ask of the service. A zero field means
// "the service-wide default", so a key made with only --max-concurrency
// keeps following the operator's other defaults when they change.
type Quota struct {
	// Per run (enforced by job validation, 422 when exceeded).
	MaxConcurrency int           `json:"max_concurrency,omitempty"`
	MaxRequests    int           `json:"max_requests,omitempty"`
	MaxDuration    time.Duration `json:"max_duration,omitempty"`
	// Per job: points × repeats.
	MaxRuns int `json:"max_runs,omitempty"`
	// Per key over time (enforced at admission, 429 when exceeded).
	MaxActiveJobs        int `json:"max_active_jobs,omitempty"`
	SubmissionsPerMinute int `json:"submissions_per_minute,omitempty"`
	// What the key may keep stored (enforced when it is written, 429 when
	// exceeded): templates, the bytes they take, templates with a schedule,
	// and pinned jobs, which outlive the retention.
	MaxTemplates     int `json:"max_templates,omitempty"`
	MaxTemplateBytes int `json:"max_template_bytes,omitempty"`
	MaxSchedules     int `json:"max_schedules,omitempty"`
	MaxPins          int `json:"max_pins,omitempty"`
}

// Over fills q's zero fields from def, the service-wide defaults.
func (q Quota) Over(def Quota) Quota {
	pick := func(v, d int) int {
		if v > 0 {
			return v
		}
		return d
	}
	if q.MaxDuration <= 0 {
		q.MaxDuration = def.MaxDuration
	}
	q.MaxConcurrency = pick(q.MaxConcurrency, def.MaxConcurrency)
	q.MaxRequests = pick(q.MaxRequests, def.MaxRequests)
	q.MaxRuns = pick(q.MaxRuns, def.MaxRuns)
	q.MaxActiveJobs = pick(q.MaxActiveJobs, def.MaxActiveJobs)
	q.SubmissionsPerMinute = pick(q.SubmissionsPerMinute, def.SubmissionsPerMinute)
	q.MaxTemplates = pick(q.MaxTemplates, def.MaxTemplates)
	q.MaxTemplateBytes = pick(q.MaxTemplateBytes, def.MaxTemplateBytes)
	q.MaxSchedules = pick(q.MaxSchedules, def.MaxSchedules)
	q.MaxPins = pick(q.MaxPins, def.MaxPins)
	return q
}

// Limits returns base with the per-run fields q sets replaced, for
// job.Spec.Validate; the limits a quota does not cover (points, body size,
// rate) stay the service's.
func (q Quota) Limits(base job.Limits) job.Limits {
	if q.MaxConcurrency > 0 {
		base.MaxConcurrency = q.MaxConcurrency
	}
	if q.MaxRequests > 0 {
		base.MaxRequests = q.MaxRequests
	}
	if q.MaxDuration > 0 {
		base.MaxDuration = q.MaxDuration
	}
	if q.MaxRuns > 0 {
		base.MaxRuns = q.MaxRuns
	}
	return base
}

// String lists the fields q sets, "defaults" when it sets none, for
// `benchq keys list`.
func (q Quota) String() string {
	var parts []string
	add := func(name string, v int) {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", name, v))
		}
	}
	add("concurrency", q.MaxConcurrency)
	add("requests", q.MaxRequests)
	if q.MaxDuration > 0 {
		parts = append(parts, "duration="+q.MaxDuration.String())
	}
	add("runs", q.MaxRuns)
	add("active-jobs", q.MaxActiveJobs)
	add("submissions/min", q.SubmissionsPerMinute)
	add("templates", q.MaxTemplates)
	add("template-bytes", q.MaxTemplateBytes)
	add("schedules", q.MaxSchedules)
	add("pins", q.MaxPins)
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, " ")
}

// Validate rejects negative fields, which have no meaning.
func (q Quota) Validate() error {
	var bad []string
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max-concurrency", int64(q.MaxConcurrency)}, {"max-requests", int64(q.MaxRequests)},
		{"max-duration", int64(q.MaxDuration)}, {"max-runs", int64(q.MaxRuns)},
		{"max-active-jobs", int64(q.MaxActiveJobs)}, {"submissions-per-minute", int64(q.SubmissionsPerMinute)},
		{"max-templates", int64(q.MaxTemplates)}, {"max-template-bytes", int64(q.MaxTemplateBytes)},
		{"max-schedules", int64(q.MaxSchedules)}, {"max-pins", int64(q.MaxPins)},
	} {
		if f.v < 0 {
			bad = append(bad, f.name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("apikey: quota: %s must not be negative", strings.Join(bad, ", "))
	}
	return nil
}
