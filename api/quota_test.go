package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
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
	env.queue.SetErr(errFakeRedis)
	if resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec); resp.StatusCode != 503 {
		t.Fatalf("POST with the queue down = %d %s, want 503", resp.StatusCode, b)
	}
	env.queue.SetErr(nil)
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

// countingVerifier is a TargetVerifier that counts the checks it is asked
// for and admits every host: it stands in for the outbound fetches.
type countingVerifier struct {
	verifies, specChecks atomic.Int64
	lastURL              atomic.Pointer[url.URL]
}

func (v *countingVerifier) Verify(_ context.Context, _ string, u *url.URL) (store.TargetHost, error) {
	v.verifies.Add(1)
	v.lastURL.Store(u)
	return store.TargetHost{Host: u.Host, Token: "t0k", Verified: true}, nil
}

func (v *countingVerifier) List(context.Context, string) ([]store.TargetHost, error) { return nil, nil }

func (v *countingVerifier) CheckSpec(context.Context, string, []job.TargetURL) error {
	v.specChecks.Add(1)
	return nil
}

// TestSubmissionRateBeforeOutboundChecks: the per-minute rate is charged
// before the address policy's lookups and the target verification
// fetches, so a caller over it causes none; a refused (422) submission
// counts too; POST /v1/targets/verify shares the same budget.
func TestSubmissionRateBeforeOutboundChecks(t *testing.T) {
	var lookups atomic.Int64
	verifier := &countingVerifier{}
	env := newKeyEnvWith(t, func(c *Config) {
		c.VerifyTargets = true
		c.CheckURL = func(u *url.URL) error {
			lookups.Add(1)
			return testservers.LoopbackOnly(u)
		}
	}, func(d *Deps) { d.Targets = verifier })
	_, jobs := env.addKey(t, "jobs", false, apikey.Quota{SubmissionsPerMinute: 2})
	_, verify := env.addKey(t, "verify", false, apikey.Quota{SubmissionsPerMinute: 1})
	refused := `{"targets":[{"url":"http://10.0.0.1/"}]}`

	if resp, b := env.do(t, http.MethodPost, "/v1/jobs", jobs, refused); resp.StatusCode != 422 {
		t.Fatalf("refused target = %d %s, want 422", resp.StatusCode, b)
	}
	env.create(t, jobs)
	before, checksBefore := lookups.Load(), verifier.specChecks.Load()
	if before != 2 || checksBefore != 1 {
		t.Fatalf("address checks %d, verifications %d after two submissions, want 2 and 1", before, checksBefore)
	}
	for _, req := range []struct{ path, body string }{
		{"/v1/jobs", okSpec}, {"/v1/jobs", refused}, {"/v1/targets/verify", `{"url":"http://127.0.0.1:9/"}`},
	} {
		resp, b := env.do(t, http.MethodPost, req.path, jobs, req.body)
		if p := problem(t, resp, b); resp.StatusCode != 429 || p.Type != problemBase+"rate-limited" || p.Limit != 2 {
			t.Errorf("POST %s over the rate = %d %+v, want 429 rate-limited with limit 2", req.path, resp.StatusCode, p)
		}
	}
	if n, m, v := lookups.Load(), verifier.specChecks.Load(), verifier.verifies.Load(); n != before || m != checksBefore || v != 0 {
		t.Errorf("over the rate: %d address checks, %d spec verifications, %d verify fetches happened; want none", n-before, m-checksBefore, v)
	}

	if resp, b := env.do(t, http.MethodPost, "/v1/targets/verify", verify, `{"url":"http://127.0.0.1:9/"}`); resp.StatusCode != 200 {
		t.Fatalf("first verify = %d %s, want 200", resp.StatusCode, b)
	}
	resp, b := env.do(t, http.MethodPost, "/v1/targets/verify", verify, `{"url":"http://127.0.0.1:9/"}`)
	if p := problem(t, resp, b); resp.StatusCode != 429 || p.Limit != 1 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second verify = %d %+v, want 429 with limit 1 and Retry-After", resp.StatusCode, p)
	}
	if n := verifier.verifies.Load(); n != 1 {
		t.Errorf("%d verification fetches, want 1: the refused one must not fetch", n)
	}
}

// TestVerifyTargetNeverEchoesCredentials: a URL's user:password@ is
// redacted from every 422 of POST /v1/targets/verify, also when url.Parse
// refuses the URL (its own error text quotes it whole), and the verifier
// gets the URL without it.
func TestVerifyTargetNeverEchoesCredentials(t *testing.T) {
	verifier := &countingVerifier{}
	env := newKeyEnvWith(t, nil, func(d *Deps) { d.Targets = verifier })
	for _, raw := range []string{
		"http://user:s3cret@127.0.0.1:8o/", // url.Parse: invalid port
		"http://user:s3cret@10.0.0.1/",     // the address policy
		"ftp://user:s3cret@127.0.0.1/",     // the scheme
		"http://us%zz:s3cret@127.0.0.1/",   // url.Parse: invalid escape in userinfo
		"http://user:s3cret@/path",         // no host
	} {
		t.Run(raw, func(t *testing.T) {
			resp, b := env.do(t, http.MethodPost, "/v1/targets/verify", "", `{"url":"`+raw+`"}`)
			p := problem(t, resp, b)
			if resp.StatusCode != 422 || p.Field != "url" {
				t.Fatalf("verify %s = %d %s, want 422 naming url", raw, resp.StatusCode, b)
			}
			if strings.Contains(string(b), "s3cret") || strings.Contains(string(b), "user:") {
				t.Errorf("422 echoes the credentials: %s", b)
			}
			if !strings.Contains(p.Detail, "xxxxx@") {
				t.Errorf("detail %q, want the URL shown redacted", p.Detail)
			}
		})
	}
	if resp, b := env.do(t, http.MethodPost, "/v1/targets/verify", "", `{"url":"http://user:s3cret@127.0.0.1:9/"}`); resp.StatusCode != 200 {
		t.Fatalf("verify a loopback URL with credentials = %d %s, want 200", resp.StatusCode, b)
	}
	if u := verifier.lastURL.Load(); u == nil || u.User != nil || u.Host != "127.0.0.1:9" {
		t.Errorf("verifier got %v, want the host without user info", u)
	}
}

// TestActiveJobsProblemDetail: the 429 for active jobs says the count and
// the limit in its detail, as well as in its value and limit fields.
func TestActiveJobsProblemDetail(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, key := env.addKey(t, "ci", false, apikey.Quota{MaxActiveJobs: 2})
	env.create(t, key)
	env.create(t, key)
	resp, b := env.do(t, http.MethodPost, "/v1/jobs", key, okSpec)
	p := problem(t, resp, b)
	if resp.StatusCode != 429 || p.Limit != 2 || p.Value != 2 || !strings.Contains(p.Detail, "2 queued or running jobs, limit 2") {
		t.Errorf("third job = %d %+v, want 429 saying \"2 queued or running jobs, limit 2\" with limit and value 2", resp.StatusCode, p)
	}
}
