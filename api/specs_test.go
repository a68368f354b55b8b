package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCreateJobRefusesAnOverlongList: a 0.99 MB spec of 330 000
// concurrency values is a 422 naming the field, its count and the limit,
// and nothing is enqueued.
func TestCreateJobRefusesAnOverlongList(t *testing.T) {
	env := newTestEnv(t, nil)
	values := strings.TrimSuffix(strings.Repeat("1,", 330_000), ",")
	body := `{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurrency":[` + values + `]}}`
	resp, b := env.do(t, http.MethodPost, "/v1/jobs", body)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("POST /v1/jobs (%d bytes) = %d %.300s, want 422", len(body), resp.StatusCode, b)
	}
	p := problem(t, resp, b)
	want := "sweep.concurrency has 330000 values; at most 64 are allowed"
	if len(p.Errors) != 1 || p.Errors[0].Field != "sweep.concurrency" || p.Errors[0].Message != want {
		t.Errorf("problem errors = %+v, want one at sweep.concurrency: %q", p.Errors, want)
	}
	if n := len(env.queue.Tasks()); n != 0 {
		t.Errorf("%d tasks enqueued, want none", n)
	}
}

// TestCreateJobListsAtMost100Problems: a spec with thousands of bad
// values gets the first 100 and a count of the rest.
func TestCreateJobListsAtMost100Problems(t *testing.T) {
	env := newTestEnv(t, nil)
	bad := make([]string, 5000)
	for i := range bad {
		bad[i] = fmt.Sprintf(`"h%d": 1`, i)
	}
	// Headers are capped at 100, so the 5 000 problems come from 50
	// targets of 100 headers each, every value of the wrong type.
	targets := make([]string, 50)
	for i := range targets {
		targets[i] = fmt.Sprintf(`{"name":"t%d","url":"http://127.0.0.1:9/","request":{"headers":{%s}}}`, i, strings.Join(bad[i*100:(i+1)*100], ","))
	}
	resp, b := env.do(t, http.MethodPost, "/v1/jobs", `{"targets":[`+strings.Join(targets, ",")+`]}`)
	p := problem(t, resp, b)
	if resp.StatusCode != http.StatusUnprocessableEntity || len(p.Errors) != 101 {
		t.Fatalf("POST /v1/jobs = %d with %d problems, want 422 with 100 and a count", resp.StatusCode, len(p.Errors))
	}
	if got, want := p.Errors[100].Message, "4900 more problems not listed"; got != want {
		t.Errorf("last problem = %q, want %q", got, want)
	}
}

// TestCreateJobBodyLimit: past the body limit the answer is a 413 problem
// naming the limit.
func TestCreateJobBodyLimit(t *testing.T) {
	env := newTestEnv(t, func(c *Config) { c.MaxBody = 1 << 20 })
	body := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	resp, b := env.do(t, http.MethodPost, "/v1/jobs", body)
	p := problem(t, resp, b)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(p.Detail, "1048576 bytes") {
		t.Errorf("POST /v1/jobs (%d bytes) = %d %+v, want 413 naming the limit", len(body), resp.StatusCode, p)
	}
	if n := len(env.queue.Tasks()); n != 0 {
		t.Errorf("%d tasks enqueued, want none", n)
	}
}

// TestTemplateScheduleCronRefused: the schedules API refuses a cron with
// its own time zone and one that never fires, naming schedule.cron.
func TestTemplateScheduleCronRefused(t *testing.T) {
	env := newKeyedEnv(t)
	for _, cron := range []string{"CRON_TZ=Asia/Tokyo 0 3 * * *", "0 0 30 2 *"} {
		body := `{"name":"nightly","spec":{"targets":[{"url":"http://127.0.0.1:9/"}]},"schedule":{"cron":"` + cron + `"}}`
		resp, b := env.do(t, env.alice, http.MethodPost, "/v1/templates", body)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("POST /v1/templates with cron %q = %d %s, want 422", cron, resp.StatusCode, b)
		}
		if p := problem(t, resp, b); len(p.Errors) != 1 || p.Errors[0].Field != "schedule.cron" {
			t.Errorf("cron %q: problem errors = %+v, want one at schedule.cron", cron, p.Errors)
		}
	}
}
