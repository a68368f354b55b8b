package job

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/google/go-cmp/cmp"
)

// fields returns the field paths of a *errcode.Error, or fails the test.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var ve *errcode.Error
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v (%T), want *errcode.Error", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false, want true", err)
	}
	out := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		out[i] = p.Field
	}
	return out
}

func TestDecodeDesignExample(t *testing.T) {
	f, err := os.Open("testdata/design-example.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Decode(f)
	if err != nil {
		t.Fatalf("Decode(design example) = %v", err)
	}
	want := Spec{
		Name:   "apache vs lighttpd, 25 KB image",
		Labels: map[string]string{"branch": "main", "commit": "abc123"},
		Targets: []Target{
			{Name: "apache", URL: "http://127.0.0.1:8081/test.jpg"},
			{Name: "lighttpd", URL: "http://127.0.0.1:8082/test.jpg"},
		},
		Request: Request{Method: "GET", Headers: map[string]string{"Accept": "image/*"}, Timeout: Duration(30 * time.Second)},
		Sweep: Sweep{
			Concurrency: []int{5, 50, 100}, Requests: []int{100, 1000, 10000},
			Repeats: 10, Order: OrderInterleaved,
		},
		Baseline:   "apache",
		Thresholds: Thresholds("rps >= 1000", "p95_ms < 200", "failed_ratio <= 0.01"),
		Webhook:    &Webhook{URL: "http://127.0.0.1:9000/hooks/benchq", Events: []string{"job.succeeded", "job.failed"}},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Decode(design example) mismatch (-want +got):\n%s", diff)
	}
	if err := s.WithDefaults().Validate(DefaultLimits(), nil); err != nil {
		t.Errorf("Validate(design example) = %v, want nil", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // field paths
		msg        string   // part of the first message
	}{
		{"empty", "", []string{""}, "empty"},
		{"blank", " \n\t", []string{""}, "empty"},
		{"malformed", `{"targets": [}`, []string{""}, "line 1"},
		{"truncated", `{"targets": [`, []string{""}, "unexpected end"},
		{"not an object", `[1, 2]`, []string{""}, "a list"},
		{"null body", `null`, []string{""}, "null"},
		{"trailing garbage", `{"targets": []} x`, []string{""}, "after the JSON object"},
		{"second object", `{} {}`, []string{""}, "after the JSON object"},
		{"unknown top field", `{"target": []}`, []string{"target"}, "unknown field"},
		{"wrong case", `{"Targets": []}`, []string{"Targets"}, "unknown field"},
		{"unknown nested", `{"targets": [{"url": "http://127.0.0.1:1/", "verb": "GET"}]}`, []string{"targets[0].verb"}, "unknown field"},
		{"unknown in request", `{"request": {"keep_alive": true}}`, []string{"request.keep_alive"}, "unknown field"},
		{"string for int list item", `{"sweep": {"concurrency": [1, "4"]}}`, []string{"sweep.concurrency[1]"}, "want an integer, got a string"},
		{"fraction for int", `{"sweep": {"requests": [1.5]}}`, []string{"sweep.requests[0]"}, "want an integer"},
		{"exponent for int", `{"sweep": {"requests": [1e3]}}`, []string{"sweep.requests[0]"}, "without exponent"},
		{"int overflow", `{"sweep": {"repeats": 99999999999999999999}}`, []string{"sweep.repeats"}, "want an integer"},
		{"string for max_body", `{"request": {"max_body": "1GiB"}}`, []string{"request.max_body"}, "want an integer, got a string"},
		{"fraction for max_body", `{"request": {"max_body": 1.5}}`, []string{"request.max_body"}, "want an integer"},
		{"exponent for max_body", `{"request": {"max_body": 1e9}}`, []string{"request.max_body"}, "without exponent"},
		{"max_body overflow", `{"targets": [{"url": "http://127.0.0.1:1/", "request": {"max_body": 9223372036854775808}}]}`,
			[]string{"targets[0].request.max_body"}, "want an integer"},
		{"scalar for list", `{"sweep": {"concurrency": 5}}`, []string{"sweep.concurrency"}, "want a list"},
		{"number for string", `{"name": 5}`, []string{"name"}, "want a string"},
		{"string for bool", `{"request": {"keepalive": "yes"}}`, []string{"request.keepalive"}, "want true or false"},
		{"string for allow_no_success", `{"allow_no_success": "yes"}`, []string{"allow_no_success"}, "want true or false"},
		{"string for exclusive", `{"exclusive": "no"}`, []string{"exclusive"}, "want true or false"},
		{"number for exclusive", `{"exclusive": 0}`, []string{"exclusive"}, "want true or false"},
		{"number for header", `{"request": {"headers": {"X-N": 1}}}`, []string{`request.headers["X-N"]`}, "want a string"},
		{"string for rate", `{"sweep": {"rate": ["fast"]}}`, []string{"sweep.rate[0]"}, "want requests per second (a number)"},
		{"bad ramp", `{"sweep": {"rate": ["100:lots"]}}`, []string{"sweep.rate[0]"}, `"100:lots": want requests per second`},
		{"object for rate", `{"sweep": {"rate": [{"from": 1}]}}`, []string{"sweep.rate[0]"}, "a ramp \"FROM:TO\""},
		{"bad duration", `{"sweep": {"duration": ["10 s"]}}`, []string{"sweep.duration[0]"}, "not a duration"},
		{"negative duration", `{"request": {"timeout": "-1s"}}`, []string{"request.timeout"}, "negative"},
		{"bool duration", `{"sweep": {"pause_between_runs": true}}`, []string{"sweep.pause_between_runs"}, "want a duration"},
		{"object for target", `{"targets": ["http://127.0.0.1:1/"]}`, []string{"targets[0]"}, "want an object"},
		{"several problems", `{"sweep": {"concurrency": ["a", 2, "b"]}, "x": 1}`,
			[]string{"sweep.concurrency[0]", "sweep.concurrency[2]", "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.body))
			got := fields(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode(%s) fields mismatch (-want +got):\n%s\nerror: %v", tt.body, diff, err)
			}
			var ve *errcode.Error
			errors.As(err, &ve)
			if !strings.Contains(ve.Problems[0].Message, tt.msg) {
				t.Errorf("Decode(%s) message = %q, want it to contain %q", tt.body, ve.Problems[0].Message, tt.msg)
			}
		})
	}
}

func TestDecodeAcceptsNullsAndSecondDurations(t *testing.T) {
	s, err := Decode(strings.NewReader(`{"targets": [{"url": "http://127.0.0.1:1/"}], "labels": null,
		"request": {"timeout": 2.5}, "sweep": {"duration": [10, "1m"], "rate": null}}`))
	if err != nil {
		t.Fatalf("Decode = %v", err)
	}
	if got, want := s.Request.Timeout.Std(), 2500*time.Millisecond; got != want {
		t.Errorf("request.timeout = %v, want %v", got, want)
	}
	if diff := cmp.Diff([]Duration{Duration(10 * time.Second), Duration(time.Minute)}, s.Sweep.Duration); diff != "" {
		t.Errorf("sweep.duration mismatch (-want +got):\n%s", diff)
	}
}

func TestDurationJSON(t *testing.T) {
	b, err := Duration(90 * time.Second).MarshalJSON()
	if err != nil || string(b) != `"1m30s"` {
		t.Errorf("MarshalJSON(90s) = %s, %v, want \"1m30s\"", b, err)
	}
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{`"1m30s"`, 90 * time.Second, false},
		{`"250ms"`, 250 * time.Millisecond, false},
		{`30`, 30 * time.Second, false},
		{`0.5`, 500 * time.Millisecond, false},
		{`null`, 0, false},
		{`"-1s"`, 0, true},
		{`-3`, 0, true},
		{`"soon"`, 0, true},
		{`1e300`, 0, true},
		{`true`, 0, true},
	}
	for _, tt := range tests {
		var d Duration
		err := d.UnmarshalJSON([]byte(tt.in))
		if (err != nil) != tt.wantErr || d.Std() != tt.want {
			t.Errorf("UnmarshalJSON(%s) = %v, %v, want %v (error %v)", tt.in, d, err, tt.want, tt.wantErr)
		}
	}
}

// TestExampleSpecsAreValid: every spec under examples/ (the seed studies
// run-seeds.sh submits) decodes strictly and validates under the default
// limits, so an example cannot rot unnoticed.
func TestExampleSpecsAreValid(t *testing.T) {
	paths, err := filepath.Glob("../../examples/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example specs: %v", err)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if err := s.WithDefaults().Validate(DefaultLimits(), nil); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
