package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/testservers"
)

// TestNoSuccessFailsTheGate runs jobs without thresholds against broken
// loopback targets through `benchq submit --wait`, on the whole service
// in-process with a real redis-server: each ends succeeded with verdict
// fail and exit 1, the Markdown summary saying what happened, and the
// job.succeeded webhook carries the verdict and its failure;
// allow_no_success lets the same job pass with exit 0.
func TestNoSuccessFailsTheGate(t *testing.T) {
	m := startOnRedis(t)
	hooks := startHookRecorder(t)
	reset := testservers.StartHostile(t, testservers.ResetOnAccept()).URL
	tests := []struct {
		name    string
		url     string
		request map[string]any
		allow   bool
		want    int
		reason  string // part of the no_success failure's reason, after "0 of 20 requests succeeded: "
	}{
		// A reset may also reach the client while it connects.
		{name: "every connection reset", url: reset, want: clicmd.ExitThresholdFailed,
			reason: "were closed or reset before the response ended"},
		{name: "garbage status line", url: testservers.StartHostile(t, testservers.GarbageStatus()).URL,
			want: clicmd.ExitThresholdFailed, reason: "were not written or not answered with valid HTTP"},
		{name: "header overflow", url: testservers.StartHostile(t, testservers.HeaderFlood()).URL,
			want: clicmd.ExitThresholdFailed, reason: "20 sent a header larger than 8 KiB"},
		{name: "body past max_body", url: testservers.StartHostile(t, testservers.HugeBody(1<<20)).URL, request: map[string]any{"max_body": 4096},
			want: clicmd.ExitThresholdFailed, reason: "20 sent a body past the body size cap (max_body)"},
		{name: "short body", url: testservers.StartHostile(t, testservers.ShortBody(100, 5)).URL,
			want: clicmd.ExitThresholdFailed, reason: "were closed or reset before the response ended"},
		{name: "timeout", url: testservers.StartHostile(t, testservers.Silent()).URL, request: map[string]any{"timeout": "200ms"},
			want: clicmd.ExitThresholdFailed, reason: "timed out"},
		{name: "every response 503", url: testservers.StartHostile(t, testservers.Answer("503", []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"))).URL,
			want: clicmd.ExitThresholdFailed, reason: "20 were answered with a non-2xx status"},
		{name: "reset, allow_no_success", url: reset, allow: true, want: clicmd.ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{
				"targets": []map[string]any{{"name": "healthz", "url": tt.url}},
				"sweep":   map[string]any{"concurrency": []int{4}, "requests": []int{20}},
				"webhook": map[string]any{"url": hooks.URL, "events": []string{"job.succeeded"}},
			}
			if tt.request != nil {
				spec["request"] = tt.request
			}
			if tt.allow {
				spec["allow_no_success"] = true
			}
			var stdout, stderr bytes.Buffer
			args := []string{"submit", writeSpec(t, spec), "--wait", "--server", m.URL()}
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != tt.want {
				t.Fatalf("benchq submit --wait = exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
			id := regexp.MustCompile(`job (\S+) submitted`).FindStringSubmatch(stderr.String())
			if id == nil {
				t.Fatalf("stderr names no job:\n%s", stderr.String())
			}
			j := waitJob(t, m.URL(), id[1], 10*time.Second)
			payload := hooks.waitFor(t, id[1], 20*time.Second)
			if tt.allow {
				if j.Status != "succeeded" || j.Verdict != "none" || !strings.Contains(stdout.String(), "## Verdict: none") ||
					payload.Data.Verdict != "none" || len(payload.Data.Failures) != 0 {
					t.Errorf("job %+v, webhook %+v, want succeeded with verdict none; summary:\n%s", j, payload.Data, stdout.String())
				}
				return
			}
			if j.Status != "succeeded" || j.Verdict != "fail" {
				t.Errorf("job = %+v, want succeeded with verdict fail", j)
			}
			a := analysis(t, m.URL(), id[1])
			if len(a.Verdict.Failures) != 1 || a.Verdict.Failures[0].Threshold != "no_success" ||
				a.Verdict.Failures[0].Target != "healthz" || a.Verdict.Failures[0].Concurrency != 4 ||
				!strings.HasPrefix(a.Verdict.Failures[0].Reason, "0 of 20 requests succeeded: ") ||
				!strings.Contains(a.Verdict.Failures[0].Reason, tt.reason) {
				t.Fatalf("failures = %+v, want healthz at c = 4 failing no_success with %q", a.Verdict.Failures, tt.reason)
			}
			t.Logf("reason: %s", a.Verdict.Failures[0].Reason)
			md := stdout.String()
			if !strings.Contains(md, "## Verdict: fail") || !strings.Contains(md, "| `no_success` | healthz | c=4, n=20 | "+a.Verdict.Failures[0].Reason) {
				t.Errorf("Markdown summary lacks the verdict and the no_success row:\n%s", md)
			}
			if payload.Data.Verdict != "fail" || len(payload.Data.Failures) != 1 || payload.Data.Failures[0].Threshold != "no_success" ||
				payload.Data.Failures[0].Reason != a.Verdict.Failures[0].Reason {
				t.Errorf("webhook data = %+v, want verdict fail with the no_success failure", payload.Data)
			}
		})
	}
}

// hookPayload is what the tests read of a webhook body.
type hookPayload struct {
	Type string `json:"type"`
	Data struct {
		JobID    string `json:"job_id"`
		Status   string `json:"status"`
		Verdict  string `json:"verdict"`
		Failures []struct {
			Threshold string `json:"threshold"`
			Reason    string `json:"reason"`
		} `json:"failures"`
	} `json:"data"`
}

// hookRecorder is a loopback webhook receiver that keeps every body it is
// sent, by job id, and answers 204.
type hookRecorder struct {
	URL     string
	mu      sync.Mutex
	got     map[string]hookPayload
	raw     map[string][]byte // the last body for each job, as sent
	arrived chan struct{}
}

func startHookRecorder(t *testing.T) *hookRecorder {
	t.Helper()
	h := &hookRecorder{got: map[string]hookPayload{}, raw: map[string][]byte{}, arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p hookPayload
		if err := json.Unmarshal(body, &p); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got[p.Data.JobID] = p
		h.raw[p.Data.JobID] = body
		h.mu.Unlock()
		select {
		case h.arrived <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/hooks"
	return h
}

// body returns the last webhook body for job id as it arrived.
func (h *hookRecorder) body(id string) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.raw[id]
}

// waitFor returns the webhook body for job id, failing the test when none
// arrived within limit.
func (h *hookRecorder) waitFor(t *testing.T, id string, limit time.Duration) hookPayload {
	t.Helper()
	timeout := time.After(limit)
	for {
		h.mu.Lock()
		p, ok := h.got[id]
		h.mu.Unlock()
		if ok {
			return p
		}
		select {
		case <-h.arrived:
		case <-time.After(100 * time.Millisecond):
		case <-timeout:
			t.Fatalf("no webhook for job %s within %s", id, limit)
		}
	}
}
