package job

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/google/go-cmp/cmp"
)

// validSpec is a small spec that passes Validate; each case breaks one rule.
func validSpec() Spec {
	return Spec{
		Targets: []Target{
			{Name: "a", URL: "http://127.0.0.1:8081/"},
			{Name: "b", URL: "http://127.0.0.1:8082/"},
		},
		Sweep: Sweep{Concurrency: []int{1, 4}, Requests: []int{200}, Repeats: 2},
	}
}

func TestValidateAcceptsValidSpec(t *testing.T) {
	if err := validSpec().Validate(DefaultLimits(), testservers.LoopbackOnly); err != nil {
		t.Fatalf("Validate(valid) = %v, want nil", err)
	}
}

func TestValidateRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *Spec)
		want   []string
	}{
		{"no targets", func(s *Spec) { s.Targets = nil }, []string{"targets"}},
		{"file scheme", func(s *Spec) { s.Targets[0].URL = "file:///etc/passwd" }, []string{"targets[0].url"}},
		{"gopher scheme", func(s *Spec) { s.Targets[1].URL = "gopher://127.0.0.1:70/" }, []string{"targets[1].url"}},
		{"no scheme", func(s *Spec) { s.Targets[0].URL = "127.0.0.1:8081" }, []string{"targets[0].url"}},
		{"no host", func(s *Spec) { s.Targets[0].URL = "http:///x" }, []string{"targets[0].url"}},
		{"unparsable url", func(s *Spec) { s.Targets[0].URL = "http://[::1" }, []string{"targets[0].url"}},
		{"policy refuses", func(s *Spec) { s.Targets[1].URL = "http://10.0.0.1/" }, []string{"targets[1].url"}},
		{"space in path", func(s *Spec) { s.Targets[1].URL = "http://127.0.0.1:8082/a b" }, []string{"targets[1].url"}},
		{"space in query", func(s *Spec) { s.Targets[0].URL = "http://127.0.0.1:8081/?q=a b" }, []string{"targets[0].url"}},
		{"tab in path", func(s *Spec) { s.Targets[0].URL = "http://127.0.0.1:8081/a\tb" }, []string{"targets[0].url"}},
		{"non-ASCII in path", func(s *Spec) { s.Targets[0].URL = "http://127.0.0.1:8081/café" }, []string{"targets[0].url"}},
		{"space in ab URL", func(s *Spec) { s.Targets[0] = Target{Name: "a", AB: "-n 200 'http://127.0.0.1:8081/a b'"} },
			[]string{"targets[0].ab"}},
		{"space in http_load URL", func(s *Spec) {
			s.Targets[0] = Target{Name: "a", HTTPLoad: "-parallel 1 -fetches 200", URLs: []string{"http://127.0.0.1:8081/", "http://127.0.0.1:8081/a b"}}
		}, []string{"targets[0].urls[1]"}},
		{"space in webhook URL", func(s *Spec) { s.Webhook = &Webhook{URL: "http://127.0.0.1:9000/a b"} }, []string{"webhook.url"}},
		{"duplicate names", func(s *Spec) { s.Targets[1].Name = "a" }, []string{"targets[1].name"}},
		{"blank name", func(s *Spec) { s.Targets[0].Name = "  " }, []string{"targets[0].name"}},
		{"colon in name", func(s *Spec) { s.Targets[0].Name = "a:b" }, []string{"targets[0].name"}},
		{"url and ab", func(s *Spec) { s.Targets[0].AB = "-n 10 http://127.0.0.1:1/" }, []string{"targets[0]"}},
		{"neither url nor ab", func(s *Spec) { s.Targets[0].URL = "" }, []string{"targets[0]"}},
		{"urls without http_load", func(s *Spec) { s.Targets[0].URLs = []string{"http://127.0.0.1:1/"} }, []string{"targets[0].urls"}},
		{"concurrency 0", func(s *Spec) { s.Sweep.Concurrency = []int{0, 4} }, []string{"sweep.concurrency[0]"}},
		{"concurrency 100000", func(s *Spec) { s.Sweep.Concurrency = []int{1, 100000} }, []string{"sweep.concurrency[1]"}},
		{"requests below concurrency", func(s *Spec) { s.Sweep.Concurrency = []int{1, 400} }, []string{"sweep.requests[0]"}},
		{"requests 0", func(s *Spec) { s.Sweep.Requests = []int{0} }, []string{"sweep.requests[0]"}},
		{"requests over limit", func(s *Spec) { s.Sweep.Requests = []int{20_000_000} }, []string{"sweep.requests[0]"}},
		{"requests and duration", func(s *Spec) { s.Sweep.Duration = []Duration{Duration(time.Second)} }, []string{"sweep.duration"}},
		{"rate without end", func(s *Spec) { s.Sweep.Requests = nil; s.Sweep.Rate = []Rate{FixedRate(100)} },
			[]string{"sweep.rate"}},
		{"rate zero", func(s *Spec) { s.Sweep.Rate = []Rate{FixedRate(0)} }, []string{"sweep.rate[0]"}},
		{"rate negative", func(s *Spec) { s.Sweep.Rate = []Rate{FixedRate(50), FixedRate(-1)} }, []string{"sweep.rate[1]"}},
		{"rate NaN", func(s *Spec) { s.Sweep.Rate = []Rate{FixedRate(math.NaN())} }, []string{"sweep.rate[0]"}},
		{"rate over limit", func(s *Spec) { s.Sweep.Rate = []Rate{FixedRate(1e9)} }, []string{"sweep.rate[0]"}},
		{"negative duration", func(s *Spec) { s.Sweep.Requests = nil; s.Sweep.Duration = []Duration{Duration(-time.Second)} },
			[]string{"sweep.duration[0]"}},
		{"duration over limit", func(s *Spec) { s.Sweep.Requests = nil; s.Sweep.Duration = []Duration{Duration(2 * time.Hour)} },
			[]string{"sweep.duration[0]"}},
		{"duplicate concurrency", func(s *Spec) { s.Sweep.Concurrency = []int{4, 4} }, []string{"sweep.concurrency[1]"}},
		{"negative repeats", func(s *Spec) { s.Sweep.Repeats = -1 }, []string{"sweep.repeats"}},
		{"too many runs", func(s *Spec) { s.Sweep.Repeats = 600 }, []string{"sweep.repeats"}},
		{"too many points", func(s *Spec) {
			s.Sweep.Concurrency = nil
			for c := 1; c <= 600; c++ {
				s.Sweep.Concurrency = append(s.Sweep.Concurrency, c)
			}
			s.Sweep.Requests = []int{1000}
			s.Sweep.Repeats = 1
		}, []string{"sweep"}},
		{"bad order", func(s *Spec) { s.Sweep.Order = "random" }, []string{"sweep.order"}},
		{"negative shards", func(s *Spec) { s.Sweep.Shards = -2 }, []string{"sweep.shards"}},
		{"shards over limit", func(s *Spec) { s.Sweep.Concurrency = []int{100}; s.Sweep.Shards = MaxShards + 1 }, []string{"sweep.shards"}},
		// concurrency 1 of [1, 4] cannot be shared by 2 workers.
		{"shards above concurrency", func(s *Spec) { s.Sweep.Shards = 2 }, []string{"sweep.shards"}},
		{"shards above an ab line's -c", func(s *Spec) {
			s.Sweep = Sweep{Shards: 3}
			s.Targets = []Target{{Name: "a", AB: "-n 10 -c 2 http://127.0.0.1:1/"}}
		}, []string{"sweep.shards"}},
		{"shards above the requests of an open run", func(s *Spec) {
			s.Sweep = Sweep{Concurrency: []int{8}, Requests: []int{3}, Rate: []Rate{FixedRate(10)}, Shards: 4}
		}, []string{"sweep.shards"}},
		{"negative warmup", func(s *Spec) { s.Sweep.WarmupRequests = -5 }, []string{"sweep.warmup_requests"}},
		{"negative pause", func(s *Spec) { s.Sweep.PauseBetweenRuns = Duration(-time.Second) }, []string{"sweep.pause_between_runs"}},
		{"baseline unknown", func(s *Spec) { s.Baseline = "nginx" }, []string{"baseline"}},
		{"unknown method", func(s *Spec) { s.Request.Method = "FETCH" }, []string{"request.method"}},
		{"http_version 3", func(s *Spec) { s.Request.HTTPVersion = "3" }, []string{"request.http_version"}},
		{"max_streams without http/2", func(s *Spec) { s.Request.MaxStreams = 4 }, []string{"request.max_streams"}},
		{"max_streams above 1000", func(s *Spec) { s.Request.HTTPVersion, s.Request.MaxStreams = "2", 1001 }, []string{"request.max_streams"}},
		{"http/2 with a rate", func(s *Spec) {
			s.Request.HTTPVersion = "2"
			s.Sweep.Requests, s.Sweep.Rate = nil, []Rate{FixedRate(100)}
			s.Sweep.Duration = []Duration{Duration(time.Second)}
		}, []string{"sweep.rate", "sweep.rate"}},
		{"max_streams negative", func(s *Spec) { s.Request.HTTPVersion, s.Request.MaxStreams = "2", -1 }, []string{"request.max_streams"}},
		{"http_version of an ab target", func(s *Spec) {
			s.Targets[0] = Target{Name: s.Targets[0].Name, AB: "-n 5 http://127.0.0.1:1/", Request: &Request{HTTPVersion: "HTTP/1.0"}}
		}, []string{"targets[0].request.http_version"}},
		{"lowercase method", func(s *Spec) { s.Request.Method = "get" }, []string{"request.method"}},
		{"body with GET", func(s *Spec) { s.Request.Method = "GET"; s.Request.Body = "x" }, []string{"request.body"}},
		{"body too large", func(s *Spec) { s.Request.Body = strings.Repeat("x", 600<<10) }, []string{"request.body"}},
		{"negative timeout", func(s *Spec) { s.Request.Timeout = Duration(-time.Second) }, []string{"request.timeout"}},
		{"negative max_body", func(s *Spec) { s.Request.MaxBody = -1 }, []string{"request.max_body"}},
		{"negative max_body of a target", func(s *Spec) { s.Targets[1].Request = &Request{MaxBody: -1 << 20} },
			[]string{"targets[1].request.max_body"}},
		{"negative max_body of an ab target", func(s *Spec) {
			s.Targets[0] = Target{Name: s.Targets[0].Name, AB: "-n 5 http://127.0.0.1:1/", Request: &Request{MaxBody: -7}}
		}, []string{"targets[0].request.max_body"}},
		{"bad --max-body of an ab target", func(s *Spec) {
			s.Targets[0] = Target{Name: s.Targets[0].Name, AB: "--max-body 0 -n 5 http://127.0.0.1:1/"}
		}, []string{"targets[0].ab"}},
		{"bad header name", func(s *Spec) { s.Request.Headers = map[string]string{"X Bad": "1"} }, []string{`request.headers["X Bad"]`}},
		{"header injection", func(s *Spec) { s.Request.Headers = map[string]string{"X-A": "1\r\nHost: evil"} },
			[]string{`request.headers["X-A"]`}},
		{"content-length header", func(s *Spec) { s.Request.Headers = map[string]string{"content-length": "5"} },
			[]string{`request.headers["content-length"]`}},
		{"target request", func(s *Spec) { s.Targets[1].Request = &Request{Method: "BREW"} }, []string{"targets[1].request.method"}},
		{"threshold unknown metric", func(s *Spec) { s.Thresholds = Thresholds("rps >= 10", "p97_ms < 5") }, []string{"thresholds[1]"}},
		{"threshold syntax", func(s *Spec) { s.Thresholds = Thresholds("rps is high") }, []string{"thresholds[0]"}},
		{"threshold unknown target", func(s *Spec) { s.Thresholds = Thresholds("c: rps > 1") }, []string{"thresholds[0]"}},
		{"webhook scheme", func(s *Spec) { s.Webhook = &Webhook{URL: "ftp://127.0.0.1/"} }, []string{"webhook.url"}},
		{"webhook policy", func(s *Spec) { s.Webhook = &Webhook{URL: "http://169.254.169.254/"} }, []string{"webhook.url"}},
		{"webhook event", func(s *Spec) {
			s.Webhook = &Webhook{URL: "http://127.0.0.1:9/", Events: []string{"job.started", "job.exploded"}}
		},
			[]string{"webhook.events[1]"}},
		{"webhook event twice", func(s *Spec) {
			s.Webhook = &Webhook{URL: "http://127.0.0.1:9/", Events: []string{"job.failed", "job.failed"}}
		}, []string{"webhook.events[1]"}},
		{"webhook private address", func(s *Spec) { s.Webhook = &Webhook{URL: "http://10.0.0.1:9000/hook"} }, []string{"webhook.url"}},
		{"label key", func(s *Spec) { s.Labels = map[string]string{"a b": "x"} }, []string{`labels["a b"]`}},
		{"name control", func(s *Spec) { s.Name = "a\nb" }, []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.mutate(&s)
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if err == nil {
				t.Fatalf("Validate = nil, want problems at %v", tt.want)
			}
			got := fields(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate fields mismatch (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	s := Spec{
		Targets: []Target{{URL: "file:///x"}, {URL: "gopher://127.0.0.1/"}},
		Sweep:   Sweep{Concurrency: []int{0, 100000}, Requests: []int{5}, Order: "x"},
	}
	got := fields(t, s.Validate(DefaultLimits(), nil))
	for _, want := range []string{"targets[0].url", "targets[1].url", "sweep.concurrency[0]", "sweep.concurrency[1]", "sweep.order"} {
		if !slices.Contains(got, want) {
			t.Errorf("Validate fields = %v, want %s among them", got, want)
		}
	}
}

func TestValidateLimits(t *testing.T) {
	s := validSpec()
	lim := Limits{MaxConcurrency: 2} // the rest default
	got := fields(t, s.Validate(lim, nil))
	if diff := cmp.Diff([]string{"sweep.concurrency[1]"}, got); diff != "" {
		t.Errorf("Validate(MaxConcurrency 2) fields mismatch (-want +got):\n%s", diff)
	}
	if err := s.Validate(Limits{}, nil); err != nil {
		t.Errorf("Validate(zero Limits) = %v, want defaults to apply", err)
	}
}

// A key whose runs may last 10 s still takes ab's default 30 s request
// timeout; a longer timeout is refused by the larger of the two bounds.
func TestValidateRequestTimeoutUnderShortRunQuota(t *testing.T) {
	lim := Limits{MaxDuration: 10 * time.Second}
	tests := []struct {
		timeout time.Duration
		want    []string
	}{
		{0, nil}, // defaults to 30 s
		{30 * time.Second, nil},
		{31 * time.Second, []string{"request.timeout"}},
	}
	for _, tt := range tests {
		s := validSpec()
		s.Request.Timeout = Duration(tt.timeout)
		s = s.WithDefaults()
		var got []string
		if err := s.Validate(lim, testservers.LoopbackOnly); err != nil {
			got = fields(t, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("timeout %v: fields mismatch (-want +got):\n%s", tt.timeout, diff)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	err := Invalid([]FieldError{{Message: "body is empty"}, {Field: "sweep.order", Message: "unknown"}})
	want := "2 problems in the job spec: body is empty; sweep.order: unknown"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// TestValidateHugeSweepIsRefusedUnexpanded guards the API: a 1 MiB body can
// list 100 000 values per dimension, whose product must never be built.
func TestValidateHugeSweepIsRefusedUnexpanded(t *testing.T) {
	s := validSpec()
	s.Sweep.Concurrency, s.Sweep.Requests = nil, nil
	for i := 1; i <= 100_000; i++ {
		s.Sweep.Concurrency = append(s.Sweep.Concurrency, i%10_000+1) // 90 000 duplicates
		s.Sweep.Requests = append(s.Sweep.Requests, 10_000+i)
	}
	err := s.Validate(DefaultLimits(), nil)
	got := fields(t, err)
	if len(got) != maxProblems+1 {
		t.Fatalf("Validate(90 000 duplicates) listed %d problems, want %d and a count of the rest", len(got), maxProblems+1)
	}
	var ve *errcode.Error
	errors.As(err, &ve)
	if last := ve.Problems[maxProblems].Message; !strings.Contains(last, "more problems") {
		t.Errorf("last problem = %q, want a count of those not listed", last)
	}

	s.Sweep.Concurrency = s.Sweep.Concurrency[:10_000] // distinct: 10^9 points, each value valid
	got = fields(t, s.Validate(DefaultLimits(), nil))
	if diff := cmp.Diff([]string{"sweep"}, got); diff != "" {
		t.Errorf("Validate(10^9 points) fields mismatch (-want +got):\n%s", diff)
	}
}
