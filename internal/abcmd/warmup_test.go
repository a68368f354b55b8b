package abcmd

import (
	"errors"
	"testing"
	"time"
)

// TestParseABWarmup: --warmup with -t loads for its duration before the
// -t window, the count -t implies dropped; without -t, or with a -n after
// it, it is refused; Args gives back a line that parses the same.
func TestParseABWarmup(t *testing.T) {
	tests := []struct {
		args     []string
		warmup   time.Duration
		requests int
		refused  bool
	}{
		{[]string{"--warmup", "5s", "-t", "10", "-c", "2", "http://127.0.0.1:1/"}, 5 * time.Second, 0, false},
		{[]string{"-t", "10", "--warmup=500ms", "http://127.0.0.1:1/"}, 500 * time.Millisecond, 0, false},
		{[]string{"--warmup", "3", "-t", "10", "http://127.0.0.1:1/"}, 3 * time.Second, 0, false},
		{[]string{"-t", "10", "http://127.0.0.1:1/"}, 0, TimeLimitRequests, false},
		{[]string{"--warmup", "5s", "-n", "100", "http://127.0.0.1:1/"}, 0, 0, true},
		{[]string{"--warmup", "5s", "-t", "10", "-n", "100", "http://127.0.0.1:1/"}, 0, 0, true},
		{[]string{"--warmup", "0s", "-t", "10", "http://127.0.0.1:1/"}, 0, 0, true},
		{[]string{"--warmup", "soon", "-t", "10", "http://127.0.0.1:1/"}, 0, 0, true},
	}
	for _, tt := range tests {
		a, err := ParseAB(tt.args)
		if tt.refused {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Errorf("ParseAB(%q) = %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseAB(%q) = %v", tt.args, err)
		}
		if a.Plan.Warmup != tt.warmup || a.Plan.Requests != tt.requests {
			t.Errorf("ParseAB(%q): warmup %v, requests %d; want %v, %d", tt.args, a.Plan.Warmup, a.Plan.Requests, tt.warmup, tt.requests)
		}
		again, err := ParseAB(a.Args())
		if err != nil || again.Plan.Warmup != a.Plan.Warmup || again.Plan.Requests != a.Plan.Requests || again.Plan.Duration != a.Plan.Duration {
			t.Errorf("ParseAB(Args() of %q = %q) = %+v, %v; want the same run", tt.args, a.Args(), again, err)
		}
	}
	if !LongTakesValue("--warmup") {
		t.Error("LongTakesValue(--warmup) = false, want true")
	}
}
