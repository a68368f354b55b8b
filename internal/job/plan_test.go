package job

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPlanURLTarget(t *testing.T) {
	s := Spec{
		Targets: []Target{
			{Name: "a", URL: "http://127.0.0.1:8081/x"},
			{Name: "b", URL: "http://127.0.0.1:8082/y", Request: &Request{Method: "PUT", Body: `{"k":1}`, ContentType: "application/json", KeepAlive: true}},
		},
		Request: Request{Headers: map[string]string{"X-B": "2", "Accept": "*/*"}, AcceptVariableLength: true, Timeout: Duration(5 * time.Second)},
		Sweep:   Sweep{Concurrency: []int{4}, Requests: []int{200}},
	}
	points := s.Points()
	got, err := s.Plan(points[0])
	if err != nil {
		t.Fatalf("Plan(a) = %v", err)
	}
	want := measure.Plan{
		URLs: []string{"http://127.0.0.1:8081/x"}, Method: "GET",
		Headers:     []measure.Header{{Key: "Accept", Value: "*/*"}, {Key: "X-B", Value: "2"}},
		Concurrency: 4, Requests: 200, Timeout: 5 * time.Second,
		AcceptVariableLength: true, ContinueOnError: true, HTTPVersion: "1.1", MaxBody: DefaultMaxBody,
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(measure.Plan{}, "Guard", "Progress")); diff != "" {
		t.Errorf("Plan(a) mismatch (-want +got):\n%s", diff)
	}
	got, err = s.Plan(points[1])
	if err != nil {
		t.Fatalf("Plan(b) = %v", err)
	}
	want = measure.Plan{
		URLs: []string{"http://127.0.0.1:8082/y"}, Method: "PUT", Body: []byte(`{"k":1}`), ContentType: "application/json",
		KeepAlive: true, Concurrency: 4, Requests: 200, Timeout: DefaultTimeout, ContinueOnError: true,
		HTTPVersion: "1.1", MaxBody: DefaultMaxBody,
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(measure.Plan{}, "Guard", "Progress")); diff != "" {
		t.Errorf("Plan(b) (own request replaces the job's) mismatch (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("measure.Plan.Validate(Plan(b)) = %v, want nil", err)
	}
}

// TestPlanHTTPVersion: a url or http_load target sends HTTP/1.1 unless the
// request says otherwise; an ab target sends ab's request (HTTP/1.0, ab's
// User-Agent) unless its ab line or the spec's request says otherwise.
func TestPlanHTTPVersion(t *testing.T) {
	const u = "http://127.0.0.1:8081/x"
	tests := []struct {
		name      string
		target    Target
		request   Request
		version   string
		userAgent string
	}{
		{"url", Target{URL: u}, Request{}, "1.1", ""},
		{"url asks 1.0", Target{URL: u}, Request{HTTPVersion: "1.0"}, "1.0", ""},
		{"url, own request", Target{URL: u, Request: &Request{HTTPVersion: "1.0"}}, Request{HTTPVersion: "1.1"}, "1.0", ""},
		{"ab", Target{AB: "-n 5 " + u}, Request{}, "1.0", "ApacheBench/2.3"},
		{"ab --http-version", Target{AB: "--http-version 1.1 -n 5 " + u}, Request{}, "1.1", "ApacheBench/2.3"},
		{"ab, job request", Target{AB: "-n 5 " + u}, Request{HTTPVersion: "1.1"}, "1.1", "ApacheBench/2.3"},
		{"ab, own request", Target{AB: "-n 5 " + u, Request: &Request{HTTPVersion: "1.1"}}, Request{HTTPVersion: "1.0"}, "1.1", "ApacheBench/2.3"},
		{"http_load", Target{HTTPLoad: "-parallel 1 -fetches 5", URLs: []string{u}}, Request{}, "1.1", ""},
		{"http_load asks 1.0", Target{HTTPLoad: "-parallel 1 -fetches 5", URLs: []string{u}}, Request{HTTPVersion: "1.0"}, "1.0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := onePointPlan(t, Spec{Targets: []Target{tt.target}, Request: tt.request})
			if got.HTTPVersion != tt.version || got.UserAgent != tt.userAgent {
				t.Errorf("Plan: HTTP/%s User-Agent %q, want HTTP/%s %q", got.HTTPVersion, got.UserAgent, tt.version, tt.userAgent)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("measure.Plan.Validate = %v", err)
			}
		})
	}
}

// onePointPlan is the plan of s's first point; s must be valid.
func onePointPlan(t *testing.T, s Spec) measure.Plan {
	t.Helper()
	if err := s.Validate(Limits{}, nil); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	p, err := s.Plan(s.Points()[0])
	if err != nil {
		t.Fatalf("Plan = %v", err)
	}
	return p
}

func TestPlanRate(t *testing.T) {
	s := Spec{Targets: []Target{{URL: "http://127.0.0.1:1/"}},
		Sweep: Sweep{Duration: []Duration{Duration(3 * time.Second)}, Rate: []Rate{FixedRate(250)}}}
	got, err := s.Plan(s.Points()[0])
	if err != nil {
		t.Fatalf("Plan = %v", err)
	}
	if got.Rate != 250 || got.Duration != 3*time.Second || got.Requests != 0 || got.Concurrency != DefaultOpenConcurrency {
		t.Errorf("Plan(rate point) = rate %v duration %v requests %d concurrency %d, want 250 3s 0 %d",
			got.Rate, got.Duration, got.Requests, got.Concurrency, DefaultOpenConcurrency)
	}
}

func TestPlanUnknownPoint(t *testing.T) {
	s := validSpec()
	for _, p := range []Point{{TargetIndex: 5, Target: "a"}, {TargetIndex: 0, Target: "z"}, {TargetIndex: -1}} {
		if _, err := s.Plan(p); !errors.Is(err, ErrUnknownPoint) {
			t.Errorf("Plan(%+v) = %v, want ErrUnknownPoint", p, err)
		}
	}
}

func TestWarmupPlan(t *testing.T) {
	s := validSpec()
	if _, ok, err := s.WarmupPlan(s.Points()[0]); ok || err != nil {
		t.Errorf("WarmupPlan(no warm-up) = ok %v, %v, want false, nil", ok, err)
	}
	s.Sweep.WarmupRequests = 2
	p := s.Points()[3] // concurrency 4
	got, ok, err := s.WarmupPlan(p)
	if !ok || err != nil {
		t.Fatalf("WarmupPlan = ok %v, %v, want true, nil", ok, err)
	}
	if got.Requests != 2 || got.Concurrency != 2 || got.Duration != 0 || got.Rate != 0 {
		t.Errorf("WarmupPlan = requests %d concurrency %d duration %v rate %v, want 2 2 0 0", got.Requests, got.Concurrency, got.Duration, got.Rate)
	}
}

// TestPlanMaxBody: the body size cap defaults to 1 GiB and comes from the
// request that applies; an ab target takes its line's --max-body, else the
// request's.
func TestPlanMaxBody(t *testing.T) {
	const u = "http://127.0.0.1:8081/x"
	tests := []struct {
		name    string
		target  Target
		request Request
		want    int64
	}{
		{"url, default", Target{URL: u}, Request{}, 1 << 30},
		{"url, job request", Target{URL: u}, Request{MaxBody: 4096}, 4096},
		{"url, own request", Target{URL: u, Request: &Request{MaxBody: 10}}, Request{MaxBody: 4096}, 10},
		{"url, own request without it", Target{URL: u, Request: &Request{}}, Request{MaxBody: 4096}, 1 << 30},
		{"http_load, job request", Target{HTTPLoad: "-parallel 1 -fetches 5", URLs: []string{u}}, Request{MaxBody: 99}, 99},
		{"ab, default", Target{AB: "-n 5 " + u}, Request{}, 1 << 30},
		{"ab --max-body", Target{AB: "--max-body 2048 -n 5 " + u}, Request{}, 2048},
		{"ab, job request", Target{AB: "-n 5 " + u}, Request{MaxBody: 4096}, 4096},
		{"ab, own request", Target{AB: "-n 5 " + u, Request: &Request{MaxBody: 8}}, Request{MaxBody: 4096}, 8},
		{"ab --max-body wins", Target{AB: "--max-body=2048 -n 5 " + u, Request: &Request{MaxBody: 8}}, Request{}, 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := onePointPlan(t, Spec{Targets: []Target{tt.target}, Request: tt.request})
			if got.MaxBody != tt.want {
				t.Errorf("Plan.MaxBody = %d, want %d", got.MaxBody, tt.want)
			}
		})
	}
}

// TestABKeepAliveShown: a job of ab lines stores no job-wide request
// options the lines override, so "-k" is not shown beside keepalive false.
func TestABKeepAliveShown(t *testing.T) {
	tests := []struct {
		name      string
		spec      Spec
		keepAlive bool
		request   string // what the stored spec's JSON says of the job-wide request
	}{
		{"ab -k", Spec{Targets: []Target{{AB: "-k -n 10 -c 1 http://127.0.0.1:1/"}}}, true, ""},
		{"ab without -k", Spec{Targets: []Target{{AB: "-n 10 -c 1 http://127.0.0.1:1/"}}}, false, ""},
		{"ab with a body", Spec{Targets: []Target{{AB: "-k -n 10 -m POST http://127.0.0.1:1/"}}, Request: Request{Body: "x"}}, true,
			`"request":{"body":"x","content_type":"text/plain","keepalive":false,"accept_variable_length":false}`},
		{"url target", Spec{Targets: []Target{{URL: "http://127.0.0.1:1/"}}}, false, `"request":{"method":"GET","keepalive":false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(Limits{}, nil); err != nil {
				t.Fatalf("Validate = %v", err)
			}
			d := tt.spec.WithDefaults()
			p, err := d.Plan(d.Points()[0])
			if err != nil || p.KeepAlive != tt.keepAlive {
				t.Errorf("Plan = keepalive %v, %v; want %v", p.KeepAlive, err, tt.keepAlive)
			}
			b, _ := json.Marshal(d)
			if tt.request == "" && strings.Contains(string(b), `"request"`) || tt.request != "" && !strings.Contains(string(b), tt.request) {
				t.Errorf("stored spec = %s, want request %q", b, tt.request)
			}
		})
	}
}
