package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
)

// TestPerRunQuotas: a key's per-run quota is a 422 naming the field, the
// limit and the value asked; another key gets the service limits.
func TestPerRunQuotas(t *testing.T) {
	env := newKeyEnv(t, func(c *Config) { c.Limits = &job.Limits{MaxConcurrency: 100} })
	_, small := env.addKey(t, "small", false, apikey.Quota{MaxConcurrency: 4, MaxRequests: 50, MaxDuration: 40 * time.Second, MaxRuns: 3})
	_, plain := env.addKey(t, "plain", false, apikey.Quota{})
	target := `"targets":[{"url":"http://127.0.0.1:9/"}]`
	tests := []struct {
		name, sweep, field, value, limit string
	}{
		{"concurrency", `"concurrency":[8],"requests":[10]`, "sweep.concurrency[0]", "8", "4"},
		{"requests", `"concurrency":[1],"requests":[80]`, "sweep.requests[0]", "80", "50"},
		{"duration", `"concurrency":[1],"duration":["1m"]`, "sweep.duration[0]", "1m0s", "40s"},
		{"runs per job", `"concurrency":[1,2],"requests":[10],"repeats":2`, "sweep.repeats", "4 runs", "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{` + target + `,"sweep":{` + tt.sweep + `}}`
			resp, b := env.do(t, http.MethodPost, "/v1/jobs", small, body)
			if resp.StatusCode != 422 {
				t.Fatalf("POST = %d %s, want 422", resp.StatusCode, b)
			}
			p := problem(t, resp, b)
			if p.Type != problemBase+"validation" || p.Field != tt.field ||
				!strings.Contains(p.Detail, tt.value) || !strings.Contains(p.Detail, "limit of "+tt.limit) {
				t.Errorf("problem = %+v, want field %s with value %s and limit %s", p, tt.field, tt.value, tt.limit)
			}
			if resp, b := env.do(t, http.MethodPost, "/v1/jobs", plain, body); resp.StatusCode != 202 {
				t.Errorf("same spec with the service limits = %d %s, want 202", resp.StatusCode, b)
			}
		})
	}
	resp, b := env.do(t, http.MethodPost, "/v1/jobs", plain, `{`+target+`,"sweep":{"concurrency":[101],"requests":[200]}}`)
	if p := problem(t, resp, b); resp.StatusCode != 422 || !strings.Contains(p.Detail, "limit of 100") {
		t.Errorf("over the service limit = %d %+v, want 422 naming the limit 100", resp.StatusCode, p)
	}
}

// TestActiveJobsQuotaExactUnderConcurrency: 10 concurrent submissions
// with room for 3 admit exactly 3; the rest are 429 with the limit, the
// count and Retry-After; a finished job frees its slot.
func TestActiveJobsQuotaExactUnderConcurrency(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, key := env.addKey(t, "ci", false, apikey.Quota{MaxActiveJobs: 3})
	type result struct {
		status int
		retry  string
		p      Problem
	}
	results := make(chan result, 10)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec)
			r := result{status: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
			if resp.StatusCode == 429 {
				r.p = problem(t, resp, b)
			}
			results <- r
		})
	}
	wg.Wait()
	close(results)
	accepted := 0
	for r := range results {
		switch r.status {
		case 202:
			accepted++
		case 429:
			if r.p.Type != problemBase+"too-many-active-jobs" || r.p.Limit != 3 || r.p.Value != 3 {
				t.Errorf("429 problem = %+v, want too-many-active-jobs with limit 3 and value 3", r.p)
			}
			if n, err := strconv.Atoi(r.retry); err != nil || n < 1 {
				t.Errorf("Retry-After = %q, want whole seconds >= 1", r.retry)
			}
		default:
			t.Errorf("status %d, want 202 or 429", r.status)
		}
	}
	if accepted != 3 {
		t.Fatalf("%d of 10 concurrent submissions accepted with max-active-jobs 3, want exactly 3", accepted)
	}

	ids := env.listIDs(t, key)
	for id := range ids {
		if _, err := env.store.UpdateJob(t.Context(), id, func(j *job.Job) error {
			return j.Transition(job.StatusCanceled, time.Now().UTC())
		}); err != nil {
			t.Fatal(err)
		}
		break
	}
	env.create(t, key)
	if resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec); resp.StatusCode != 429 {
		t.Errorf("after one freed slot was retaken: POST = %d %s, want 429", resp.StatusCode, b)
	}
}

// TestActiveSlotReleasedOnEnqueueFailure: a job the queue refused holds
// no slot.
func TestActiveSlotReleasedOnEnqueueFailure(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, key := env.addKey(t, "ci", false, apikey.Quota{MaxActiveJobs: 1})
	env.queue.err = errors.New("queue down")
	if resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec); resp.StatusCode != 503 {
		t.Fatalf("POST with the queue down = %d %s, want 503", resp.StatusCode, b)
	}
	env.queue.mu.Lock()
	env.queue.err = nil
	env.queue.mu.Unlock()
	env.create(t, key) // the only slot is free again
}

// TestSubmissionRateQuota: over the per-minute rate is a 429 with the
// limit and a Retry-After; each key has its own budget; the open mode's
// anonymous caller gets the service defaults.
func TestSubmissionRateQuota(t *testing.T) {
	env := newKeyEnv(t, func(c *Config) { c.SubmissionsPerMinute = 2 })
	_, fast := env.addKey(t, "fast", false, apikey.Quota{SubmissionsPerMinute: 3})
	_, def := env.addKey(t, "default", false, apikey.Quota{})
	for key, limit := range map[string]int{fast: 3, def: 2} {
		for i := range limit {
			if resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec); resp.StatusCode != 202 {
				t.Fatalf("submission %d of %d = %d %s, want 202", i+1, limit, resp.StatusCode, b)
			}
		}
		resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec)
		if resp.StatusCode != 429 {
			t.Fatalf("submission %d = %d %s, want 429", limit+1, resp.StatusCode, b)
		}
		p := problem(t, resp, b)
		retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if p.Type != problemBase+"rate-limited" || p.Limit != limit || !strings.Contains(p.Detail, fmt.Sprint(limit)) {
			t.Errorf("problem = %+v, want rate-limited with limit %d", p, limit)
		}
		if err != nil || retry < 1 || retry > 60/limit+1 {
			t.Errorf("Retry-After = %q, want 1..%d s (one emission interval)", resp.Header.Get("Retry-After"), 60/limit+1)
		}
	}
}

func TestOpenModeUsesServiceQuota(t *testing.T) {
	env := newKeyEnv(t, func(c *Config) { c.MaxActiveJobs = 1 })
	env.create(t, "")
	resp, b := env.do(t, http.MethodPost, "/v1/jobs", "", okSpec)
	if p := problem(t, resp, b); resp.StatusCode != 429 || p.Limit != 1 {
		t.Errorf("second anonymous job = %d %+v, want 429 with limit 1", resp.StatusCode, p)
	}
}
