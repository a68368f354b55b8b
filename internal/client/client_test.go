package client

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newTestClient(t *testing.T, h http.Handler) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/", "k_secret")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewRejectsBadServerURL(t *testing.T) {
	for _, base := range []string{"", "127.0.0.1:8080", "ftp://127.0.0.1/", "http://", "://x"} {
		if _, err := New(base, ""); err == nil {
			t.Errorf("New(%q) = nil error, want one", base)
		}
	}
}

func TestSubmit(t *testing.T) {
	var gotAuth, gotKey, gotBody, gotType string
	status := http.StatusAccepted
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/jobs" {
			t.Errorf("request %s %s, want POST /v1/jobs", r.Method, r.URL.Path)
		}
		gotAuth, gotKey, gotType = r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key"), r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.WriteHeader(status)
		io.WriteString(w, `{"id":"j1","status":"queued","progress":{"runs_total":8},"webhook_secret":"whsec_abc"}`)
	}))
	tests := []struct {
		name     string
		status   int
		replayed bool
	}{
		{"created", http.StatusAccepted, false},
		{"replayed", http.StatusOK, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status = tt.status
			got, err := c.Submit(t.Context(), Submission{Spec: []byte(`{"targets":[]}`), IdempotencyKey: "idem-1"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Job.ID != "j1" || got.Job.Progress.RunsTotal != 8 || got.Job.WebhookSecret != "whsec_abc" || got.Replayed != tt.replayed {
				t.Errorf("Submit = %+v, want job j1 with 8 runs, its secret, replayed %v", got, tt.replayed)
			}
			if !strings.Contains(string(got.Job.Raw), `"webhook_secret"`) {
				t.Errorf("Raw = %s, want the answer as sent", got.Job.Raw)
			}
			if gotAuth != "Bearer k_secret" || gotKey != "idem-1" || gotBody != `{"targets":[]}` || gotType != "application/json" {
				t.Errorf("server saw Authorization %q, Idempotency-Key %q, Content-Type %q, body %q", gotAuth, gotKey, gotType, gotBody)
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		is       error
		contains []string
	}{
		{"validation with a field", 422, `{"type":"https://benchq.dev/problems/validation","title":"Invalid job spec","status":422,"detail":"must be at least 1","field":"sweep.concurrency[0]","request_id":"r1"}`,
			nil, []string{"422 Invalid job spec: must be at least 1 (field sweep.concurrency[0]) [request r1]"}},
		{"several fields", 422, `{"title":"Invalid job spec","status":422,"detail":"2 problem(s) in the job spec","errors":[{"field":"a","message":"bad a"},{"field":"b","message":"bad b"}]}`,
			nil, []string{"2 problem(s)", "\n  a: bad a", "\n  b: bad b"}},
		{"not found", 404, `{"title":"Not found","status":404}`, ErrNotFound, []string{"404 Not found"}},
		{"conflict", 409, `{"title":"Job already finished","status":409,"detail":"job j1 is succeeded"}`, ErrConflict, []string{"job j1 is succeeded"}},
		{"not problem+json", 502, "<html>bad gateway</html>", nil, []string{"502 Bad Gateway: <html>bad gateway</html>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			_, err := c.Job(t.Context(), "j1")
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tt.status {
				t.Fatalf("Job() error = %v, want an *APIError with status %d", err, tt.status)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New("http://"+addr, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Cancel(t.Context(), "j1")
	var ae *APIError
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("Cancel on a closed port = %v, want a connection error", err)
	}
}

func TestReport(t *testing.T) {
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/v1/jobs/j%201/report" {
			t.Errorf("path %q, want the id escaped", r.URL.EscapedPath())
		}
		io.WriteString(w, "format="+r.URL.Query().Get("format"))
	}))
	body, err := c.Report(t.Context(), "j 1", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(b) != "format=markdown" {
		t.Errorf("Report body = %q (%v), want format=markdown", b, err)
	}
}

// TestResultsTimeline: Results asks for timelines only when told to, and
// reads each run's intervals; ReportWith sends the run it names.
func TestResultsTimeline(t *testing.T) {
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/jobs/j1/report":
			io.WriteString(w, r.URL.RawQuery)
		case r.URL.RawQuery == "timeline=true":
			io.WriteString(w, `{"runs":[{"point":1,"repeat":2,"timeline":{"interval_s":0.5,"intervals":[{"t_s":0,"requests":7,"p99_ms":1.5}]}}]}`)
		default:
			io.WriteString(w, `{"runs":[{"point":1,"repeat":2}]}`)
		}
	}))
	r, err := c.Results(t.Context(), "j1", ResultsOptions{})
	if err != nil || len(r.Runs) != 1 || r.Runs[0].Timeline != nil {
		t.Fatalf("Results = %+v, %v; want one run without a timeline", r, err)
	}
	r, err = c.Results(t.Context(), "j1", ResultsOptions{Timeline: true})
	if err != nil || len(r.Runs) != 1 || r.Runs[0].Timeline == nil {
		t.Fatalf("Results(timeline) = %+v, %v; want one run with a timeline", r, err)
	}
	if tl := r.Runs[0].Timeline; tl.IntervalS != 0.5 || len(tl.Intervals) != 1 || tl.Intervals[0].Requests != 7 || tl.Intervals[0].P99Ms != 1.5 || !strings.Contains(string(r.Raw), `"interval_s":0.5`) {
		t.Errorf("timeline = %+v, raw %s", tl, r.Raw)
	}
	body, err := c.ReportWith(t.Context(), "j1", ReportQuery{Format: "hgrm", Run: "0:1"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body)
	body.Close()
	if string(b) != "format=hgrm&run=0%3A1" {
		t.Errorf("ReportWith sent %q, want format=hgrm&run=0%%3A1", b)
	}
}
