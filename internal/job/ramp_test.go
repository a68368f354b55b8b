package job

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/google/go-cmp/cmp"
)

func TestDecodeRatesAndStages(t *testing.T) {
	s, err := Decode(strings.NewReader(`{"targets": [{"url": "http://127.0.0.1:1/"}],
		"sweep": {"rate": [100, "250", "100:5000", " 5000 : 100 "], "duration": ["60s"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rate{FixedRate(100), FixedRate(250), {From: 100, To: 5000}, {From: 5000, To: 100}}
	if diff := cmp.Diff(want, s.Sweep.Rate); diff != "" {
		t.Errorf("sweep.rate (-want +got):\n%s", diff)
	}
	// A stored spec is written back and read again: numbers stay numbers.
	b, err := json.Marshal(s.Sweep.Rate)
	if err != nil || string(b) != `[100,250,"100:5000","5000:100"]` {
		t.Errorf("Marshal(rates) = %s, %v; want [100,250,\"100:5000\",\"5000:100\"]", b, err)
	}
	s, err = Decode(strings.NewReader(`{"targets": [{"url": "http://127.0.0.1:1/"}],
		"stages": [{"rate": 100, "duration": "10s"}, {"rate": 2000, "duration": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	wantStages := []Stage{{Rate: 100, Duration: Duration(10 * time.Second)}, {Rate: 2000, Duration: Duration(30 * time.Second)}}
	if diff := cmp.Diff(wantStages, s.Stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

func TestValidateRamps(t *testing.T) {
	rateStages := []Stage{{Rate: 100, Duration: Duration(10 * time.Second)}, {Rate: 2000, Duration: Duration(30 * time.Second)}}
	tests := []struct {
		name   string
		mutate func(*Spec)
		want   []string
	}{
		{"ramp without duration", func(s *Spec) { s.Sweep.Rate = []Rate{{From: 100, To: 5000}} }, []string{"sweep.rate[0]"}},
		{"ramp to zero", func(s *Spec) {
			s.Sweep.Requests, s.Sweep.Duration = nil, []Duration{Duration(time.Minute)}
			s.Sweep.Rate = []Rate{{From: 100, To: 0}}
		}, []string{"sweep.rate[0]"}},
		{"ramp over limit", func(s *Spec) {
			s.Sweep.Requests, s.Sweep.Duration = nil, []Duration{Duration(time.Minute)}
			s.Sweep.Rate = []Rate{{From: 100, To: 1e9}}
		}, []string{"sweep.rate[0]"}},
		{"ramp on shards", func(s *Spec) {
			s.Sweep.Requests, s.Sweep.Duration, s.Sweep.Shards = nil, []Duration{Duration(time.Minute)}, 2
			s.Sweep.Concurrency = []int{4}
			s.Sweep.Rate = []Rate{{From: 100, To: 500}}
		}, []string{"sweep.rate[0]"}},
		{"two ramps of one start", func(s *Spec) {
			s.Sweep.Requests, s.Sweep.Duration = nil, []Duration{Duration(time.Minute)}
			s.Sweep.Rate = []Rate{{From: 100, To: 500}, FixedRate(200), {From: 100, To: 900}}
		}, []string{"sweep.rate[2]"}},
		{"stages with sweep stops", func(s *Spec) { s.Stages = rateStages }, []string{"sweep.requests"}},
		{"stage with both", func(s *Spec) {
			s.Sweep.Requests, s.Sweep.Concurrency = nil, nil
			s.Stages = []Stage{{Rate: 1, Concurrency: 2, Duration: Duration(time.Second)}}
		}, []string{"stages[0]"}},
		{"stages of two kinds", func(s *Spec) {
			s.Sweep.Requests = nil
			s.Stages = []Stage{{Rate: 10, Duration: Duration(time.Second)}, {Concurrency: 2, Duration: Duration(time.Second)}}
		}, []string{"stages[1].concurrency"}},
		{"negative stage", func(s *Spec) {
			s.Sweep.Requests = nil
			s.Stages = []Stage{{Rate: 10, Duration: Duration(-time.Second)}, {Rate: 20, Duration: Duration(time.Second)}}
		}, []string{"stages[0].duration"}},
		{"stages without time", func(s *Spec) {
			s.Sweep.Requests = nil
			s.Stages = []Stage{{Rate: 10}}
		}, []string{"stages"}},
		{"stage rate over limit", func(s *Spec) {
			s.Sweep.Requests = nil
			s.Stages = []Stage{{Rate: 1e9, Duration: Duration(time.Second)}}
		}, []string{"stages[0].rate"}},
		{"concurrency stages with sweep concurrency", func(s *Spec) {
			s.Sweep.Requests = nil
			s.Stages = []Stage{{Concurrency: 10, Duration: Duration(time.Second)}}
		}, []string{"sweep.concurrency"}},
		{"stages too long", func(s *Spec) {
			s.Sweep.Requests = nil
			s.Stages = []Stage{{Rate: 10, Duration: Duration(1000 * time.Hour)}}
		}, []string{"stages"}},
		{"stages with warmup", func(s *Spec) {
			s.Sweep.Requests, s.Warmup = nil, Duration(time.Second)
			s.Stages = rateStages
		}, []string{"warmup"}},
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

// TestPlanRamps checks what the engine is given: a ramp's start and its
// one stage over the duration; a spec's stages as they are, the run
// lasting their sum; the closed model's connections for concurrency
// stages.
func TestPlanRamps(t *testing.T) {
	target := []Target{{Name: "a", URL: "http://127.0.0.1:1/"}}
	tests := []struct {
		name string
		spec Spec
		want measure.Plan
	}{
		{"rate ramp", Spec{Targets: target, Sweep: Sweep{Rate: []Rate{{From: 100, To: 5000}}, Duration: []Duration{Duration(time.Minute)}}},
			measure.Plan{Concurrency: DefaultOpenConcurrency, Duration: time.Minute, Rate: 100,
				Stages: []measure.Stage{{Duration: time.Minute, Rate: 5000}}}},
		{"rate stages", Spec{Targets: target, Stages: []Stage{{Rate: 100, Duration: Duration(10 * time.Second)}, {Rate: 2000, Duration: Duration(30 * time.Second)}}},
			measure.Plan{Concurrency: DefaultOpenConcurrency, Duration: 40 * time.Second,
				Stages: []measure.Stage{{Duration: 10 * time.Second, Rate: 100}, {Duration: 30 * time.Second, Rate: 2000}}}},
		{"concurrency stages", Spec{Targets: target, Stages: []Stage{{Concurrency: 10, Duration: Duration(10 * time.Second)}, {Concurrency: 100, Duration: Duration(30 * time.Second)}}},
			measure.Plan{Concurrency: 100, Duration: 40 * time.Second,
				Stages: []measure.Stage{{Duration: 10 * time.Second, Concurrency: 10}, {Duration: 30 * time.Second, Concurrency: 100}}}},
		{"ab line's ramp", Spec{Targets: []Target{{Name: "a", AB: "--rate 10:20 -t 5 -c 3 http://127.0.0.1:1/"}}},
			measure.Plan{Concurrency: 3, Duration: 5 * time.Second, Rate: 10,
				Stages: []measure.Stage{{Duration: 5 * time.Second, Rate: 20}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec.WithDefaults()
			if err := s.Validate(DefaultLimits(), testservers.LoopbackOnly); err != nil {
				t.Fatalf("Validate = %v", err)
			}
			points := s.Points()
			if len(points) != 1 {
				t.Fatalf("%d points, want 1: %+v", len(points), points)
			}
			got, err := s.Plan(points[0])
			if err != nil {
				t.Fatal(err)
			}
			g := measure.Plan{Concurrency: got.Concurrency, Requests: got.Requests, Duration: got.Duration, Rate: got.Rate, Stages: got.Stages}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("the engine refuses the plan: %v", err)
			}
			if tt.name == "rate ramp" && points[0].RateTo != 5000 {
				t.Errorf("point %+v, want rate_to 5000", points[0])
			}
		})
	}
}
