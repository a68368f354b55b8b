package job

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWithDefaults(t *testing.T) {
	s := Spec{Targets: []Target{{URL: "http://127.0.0.1:1/"}, {Name: "b", URL: "http://127.0.0.1:2/", Request: &Request{Body: "x"}}},
		Webhook: &Webhook{URL: "http://127.0.0.1:9/"}}
	got := s.WithDefaults()
	exclusive := true
	want := Spec{
		Targets: []Target{
			{Name: "target-1", URL: "http://127.0.0.1:1/"},
			{Name: "b", URL: "http://127.0.0.1:2/", Request: &Request{
				Method: "POST", Body: "x", ContentType: "text/plain", Timeout: Duration(30 * time.Second), MaxBody: 1 << 30}},
		},
		Request:   Request{Method: "GET", Timeout: Duration(30 * time.Second), MaxBody: 1 << 30},
		Sweep:     Sweep{Concurrency: []int{1}, Requests: []int{100}, Repeats: 1, Order: OrderInterleaved, Shards: 1},
		Webhook:   &Webhook{URL: "http://127.0.0.1:9/", Events: []string{EventSucceeded, EventFailed, EventCanceled}},
		Exclusive: &exclusive,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithDefaults mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, got.WithDefaults()); diff != "" {
		t.Errorf("WithDefaults is not idempotent (-once +twice):\n%s", diff)
	}
	if s.Targets[0].Name != "" || s.Targets[1].Request.Method != "" || s.Webhook.Events != nil {
		t.Errorf("WithDefaults modified its receiver: %+v", s)
	}
}

func TestWithDefaultsOpenModelAndFlags(t *testing.T) {
	open := Spec{Targets: []Target{{URL: "http://127.0.0.1:1/"}}, Sweep: Sweep{Rate: []Rate{FixedRate(50)}, Duration: []Duration{Duration(time.Second)}}}
	if got := open.WithDefaults().Sweep.Concurrency; !cmp.Equal(got, []int{DefaultOpenConcurrency}) {
		t.Errorf("WithDefaults(rate).sweep.concurrency = %v, want [%d]", got, DefaultOpenConcurrency)
	}
	ab := Spec{Targets: []Target{{AB: "-n 10 http://127.0.0.1:1/"}}}
	if got := ab.WithDefaults().Sweep; got.Concurrency != nil || got.Requests != nil {
		t.Errorf("WithDefaults(ab target).sweep = %+v, want concurrency and requests left to the flags", got)
	}
}

func TestPointsOrder(t *testing.T) {
	s := Spec{
		Targets: []Target{{Name: "a", URL: "http://127.0.0.1:1/"}, {Name: "b", URL: "http://127.0.0.1:2/"}},
		Sweep:   Sweep{Concurrency: []int{1, 4}, Requests: []int{100, 200}},
	}
	want := []Point{
		{0, "a", 0, 1, 100, 0, 0, 0}, {1, "b", 1, 1, 100, 0, 0, 0},
		{2, "a", 0, 1, 200, 0, 0, 0}, {3, "b", 1, 1, 200, 0, 0, 0},
		{4, "a", 0, 4, 100, 0, 0, 0}, {5, "b", 1, 4, 100, 0, 0, 0},
		{6, "a", 0, 4, 200, 0, 0, 0}, {7, "b", 1, 4, 200, 0, 0, 0},
	}
	if diff := cmp.Diff(want, s.Points()); diff != "" {
		t.Errorf("Points mismatch (-want +got):\n%s", diff)
	}
}

func TestPointsRateAndDuration(t *testing.T) {
	s := Spec{
		Targets: []Target{{Name: "a", URL: "http://127.0.0.1:1/"}},
		Sweep:   Sweep{Duration: []Duration{Duration(10 * time.Second)}, Rate: []Rate{FixedRate(100), FixedRate(200)}},
	}
	want := []Point{
		{Index: 0, Target: "a", Concurrency: 100, Duration: Duration(10 * time.Second), Rate: 100},
		{Index: 1, Target: "a", Concurrency: 100, Duration: Duration(10 * time.Second), Rate: 200},
	}
	if diff := cmp.Diff(want, s.Points()); diff != "" {
		t.Errorf("Points mismatch (-want +got):\n%s", diff)
	}
}

func TestSchedule(t *testing.T) {
	s := Spec{
		Targets: []Target{{Name: "a", URL: "http://127.0.0.1:1/"}, {Name: "b", URL: "http://127.0.0.1:2/"}},
		Sweep:   Sweep{Requests: []int{10}, Repeats: 3},
	}
	interleaved := []RunKey{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}
	if diff := cmp.Diff(interleaved, s.Schedule()); diff != "" {
		t.Errorf("Schedule(interleaved) mismatch (-want +got):\n%s", diff)
	}
	s.Sweep.Order = OrderSequential
	sequential := []RunKey{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}
	if diff := cmp.Diff(sequential, s.Schedule()); diff != "" {
		t.Errorf("Schedule(sequential) mismatch (-want +got):\n%s", diff)
	}
}

func TestEstimateGrows(t *testing.T) {
	base := validSpec()
	e0 := base.Estimate()
	if e0 <= 0 {
		t.Fatalf("Estimate(valid) = %v, want > 0", e0)
	}
	grow := []struct {
		name   string
		mutate func(s *Spec)
	}{
		{"more repeats", func(s *Spec) { s.Sweep.Repeats = 3 }},
		{"more requests", func(s *Spec) { s.Sweep.Requests = []int{20000} }},
		{"more points", func(s *Spec) { s.Sweep.Requests = []int{200, 400} }},
		{"a third target", func(s *Spec) { s.Targets = append(s.Targets, Target{Name: "c", URL: "http://127.0.0.1:3/"}) }},
		{"pauses", func(s *Spec) { s.Sweep.PauseBetweenRuns = Duration(time.Second) }},
		{"warm-up", func(s *Spec) { s.Sweep.WarmupRequests = 1000 }},
		{"longer timeout", func(s *Spec) { s.Request.Timeout = Duration(time.Minute) }},
	}
	for _, g := range grow {
		s := validSpec()
		g.mutate(&s)
		if e := s.Estimate(); e <= e0 {
			t.Errorf("Estimate(%s) = %v, want more than %v", g.name, e, e0)
		}
	}
}

func TestEstimateValues(t *testing.T) {
	one := func(sw Sweep) Spec {
		return Spec{Targets: []Target{{URL: "http://127.0.0.1:1/"}}, Request: Request{Timeout: Duration(time.Second)}, Sweep: sw}
	}
	tests := []struct {
		name string
		s    Spec
		want time.Duration
	}{
		// 1000 requests at c=1: 50/s = 20s, + 1s timeout + 1s overhead.
		{"closed c=1", one(Sweep{Requests: []int{1000}}), 22 * time.Second},
		// c=100 is capped at 1000/s: 10s + 2s.
		{"closed c=100", one(Sweep{Concurrency: []int{100}, Requests: []int{10000}}), 12 * time.Second},
		{"duration", one(Sweep{Duration: []Duration{Duration(time.Minute)}}), 62 * time.Second},
		{"rate", one(Sweep{Concurrency: []int{10}, Requests: []int{500}, Rate: []Rate{FixedRate(100)}}), 7 * time.Second},
		// two runs of 22s and one 5s pause.
		{"repeats and pause", one(Sweep{Requests: []int{1000}, Repeats: 2, PauseBetweenRuns: Duration(5 * time.Second)}), 49 * time.Second},
	}
	for _, tt := range tests {
		if got := tt.s.Estimate(); got != tt.want {
			t.Errorf("Estimate(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
