package job

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestServerSideEffects(t *testing.T) {
	tests := []struct {
		args []string
		want string // a word of the refusal, or "" for accepted
	}{
		{[]string{"-n", "10", "http://127.0.0.1:1/"}, ""},
		{[]string{"-p", "body.json", "http://127.0.0.1:1/"}, "-p"},
		{[]string{"-pbody.json", "http://127.0.0.1:1/"}, "-p"},
		{[]string{"-u", "f", "http://127.0.0.1:1/"}, "-u"},
		{[]string{"-e", "out.csv", "http://127.0.0.1:1/"}, "-e"},
		{[]string{"-kg", "out.tsv", "http://127.0.0.1:1/"}, "-g"},
		{[]string{"-X", "127.0.0.1:3128", "http://127.0.0.1:1/"}, "-X"},
		{[]string{"-H", "-p: not a flag", "http://127.0.0.1:1/"}, ""}, // a value, not -p
		{[]string{"-Hx-p: 1", "-k", "http://127.0.0.1:1/"}, ""},
		{[]string{"http://127.0.0.1:1/", "-p", "f"}, ""},                       // after the URL ab reads no options
		{[]string{"--format", "json", "-p", "f", "http://127.0.0.1:1/"}, "-p"}, // a long option's value is no URL
		{[]string{"--http-version=1.1", "-e", "f", "http://127.0.0.1:1/"}, "-e"},
		{[]string{"--json", "--rate", "5", "-k", "http://127.0.0.1:1/"}, ""},
		{[]string{"--urls", "list.txt"}, "--urls"},
	}
	for _, tt := range tests {
		got := serverSideEffects(tt.args)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("serverSideEffects(%q) = %q, want a refusal naming %q", tt.args, got, tt.want)
		}
	}
}

func TestABTarget(t *testing.T) {
	s := Spec{
		Targets: []Target{{Name: "ab", AB: "-n 300 -c 3 -k -H X-Token:abc http://127.0.0.1:8081/p"}},
		Request: Request{Headers: map[string]string{"X-Job": "ignored for ab targets"}},
	}
	if err := s.Validate(DefaultLimits(), testservers.LoopbackOnly); err != nil {
		t.Fatalf("Validate(ab target) = %v, want nil", err)
	}
	points := s.Points()
	want := []Point{{Index: 0, Target: "ab", Concurrency: 3, Requests: 300}}
	if diff := cmp.Diff(want, points); diff != "" {
		t.Fatalf("Points(ab target) mismatch (-want +got):\n%s", diff)
	}
	plan, err := s.Plan(points[0])
	if err != nil {
		t.Fatalf("Plan(ab target) = %v", err)
	}
	wantPlan := measure.Plan{
		URLs: []string{"http://127.0.0.1:8081/p"}, Method: "GET",
		Headers:   []measure.Header{{Key: "X-Token", Value: "abc"}},
		KeepAlive: true, Concurrency: 3, Requests: 300, Timeout: DefaultTimeout,
		HTTPVersion: "1.0", UserAgent: "ApacheBench/2.3", // ab's own request
		MaxBody: DefaultMaxBody,
	}
	if diff := cmp.Diff(wantPlan, plan, cmpopts.IgnoreFields(measure.Plan{}, "Guard", "Progress")); diff != "" {
		t.Errorf("Plan(ab target) mismatch (-want +got):\n%s", diff)
	}
}

func TestABTargetSweepWins(t *testing.T) {
	s := Spec{
		Targets: []Target{
			{Name: "ab", AB: "-n 300 -c 3 http://127.0.0.1:8081/"},
			{Name: "url", URL: "http://127.0.0.1:8082/"},
		},
		Sweep: Sweep{Concurrency: []int{1, 2}},
	}
	// concurrency from the sweep for both; requests from -n for the ab
	// target and the default for the url target.
	want := []Point{
		{Index: 0, Target: "ab", TargetIndex: 0, Concurrency: 1, Requests: 300},
		{Index: 1, Target: "url", TargetIndex: 1, Concurrency: 1, Requests: DefaultRequests},
		{Index: 2, Target: "ab", TargetIndex: 0, Concurrency: 2, Requests: 300},
		{Index: 3, Target: "url", TargetIndex: 1, Concurrency: 2, Requests: DefaultRequests},
	}
	if diff := cmp.Diff(want, s.Points()); diff != "" {
		t.Errorf("Points mismatch (-want +got):\n%s", diff)
	}
	s.Sweep.Duration = []Duration{Duration(time.Second)}
	for _, p := range s.Points() {
		if p.Requests != 0 || p.Duration != Duration(time.Second) {
			t.Errorf("Points with sweep.duration: %+v, want duration 1s and no -n", p)
		}
	}
}

func TestABTargetProblems(t *testing.T) {
	tests := []struct {
		name string
		t    Target
		want string
	}{
		{"reads a file", Target{AB: "-p body.json http://127.0.0.1:1/"}, "targets[0].ab"},
		{"writes a file", Target{AB: "-n 10 -g out.tsv http://127.0.0.1:1/"}, "targets[0].ab"},
		{"unknown flag", Target{AB: "-Q http://127.0.0.1:1/"}, "targets[0].ab"},
		{"bad scheme", Target{AB: "-n 10 ftp://127.0.0.1:1/"}, "targets[0].ab"},
		{"policy", Target{AB: "-n 10 http://10.1.2.3/"}, "targets[0].ab"},
		{"n below c", Target{AB: "-n 5 -c 10 http://127.0.0.1:1/"}, "targets[0].ab"},
		{"c over limit", Target{AB: "-n 200000 -c 20000 http://127.0.0.1:1/"}, "targets[0].ab"},
		{"request headers on ab", Target{AB: "http://127.0.0.1:1/", Request: &Request{Method: "PUT"}}, "targets[0].request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Targets: []Target{tt.t}}
			got := fields(t, s.Validate(DefaultLimits(), testservers.LoopbackOnly))
			if !slices.Contains(got, tt.want) {
				t.Errorf("Validate fields = %v, want %s among them", got, tt.want)
			}
		})
	}
}

func TestHTTPLoadTarget(t *testing.T) {
	s := Spec{Targets: []Target{{
		Name: "hl", HTTPLoad: "-parallel 10 -fetches 1000",
		URLs: []string{"http://127.0.0.1:1/a", "http://127.0.0.1:1/b"},
	}}}
	if err := s.Validate(DefaultLimits(), testservers.LoopbackOnly); err != nil {
		t.Fatalf("Validate(http_load target) = %v, want nil", err)
	}
	p := s.Points()
	if len(p) != 1 || p[0].Concurrency != 10 || p[0].Requests != 1000 {
		t.Fatalf("Points(http_load) = %+v, want one point c=10 n=1000", p)
	}
	plan, err := s.Plan(p[0])
	if err != nil || len(plan.URLs) != 2 {
		t.Errorf("Plan(http_load) = %v URLs, %v, want the 2 URLs", plan.URLs, err)
	}
	if plan.AcceptVariableLength || plan.KeepAlive {
		t.Errorf("Plan(http_load) variable length = %v, keep-alive = %v; want false, false as http_load",
			plan.AcceptVariableLength, plan.KeepAlive)
	}
	s.Targets[0].URLs = append(s.Targets[0].URLs, "gopher://127.0.0.1/")
	got := fields(t, s.Validate(DefaultLimits(), testservers.LoopbackOnly))
	if diff := cmp.Diff([]string{"targets[0].urls[2]"}, got); diff != "" {
		t.Errorf("Validate(bad url in list) fields mismatch (-want +got):\n%s", diff)
	}
	s.Targets[0].URLs = nil
	if got := fields(t, s.Validate(DefaultLimits(), nil)); !slices.Contains(got, "targets[0].urls") {
		t.Errorf("Validate(http_load without urls) fields = %v, want targets[0].urls", got)
	}
}
