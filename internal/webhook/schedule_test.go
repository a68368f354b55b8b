package webhook

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	got, err := ParseSchedule("1s, 2s,5m")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Schedule{time.Second, 2 * time.Second, 5 * time.Minute}); got.String() != want.String() {
		t.Errorf("ParseSchedule = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1s,", "soon", "1s,-2s", "0s"} {
		if _, err := ParseSchedule(bad); !errors.Is(err, ErrBadSchedule) {
			t.Errorf("ParseSchedule(%q) = %v, want ErrBadSchedule", bad, err)
		}
	}
}

func TestDefaultScheduleLastsAboutADay(t *testing.T) {
	s := DefaultSchedule()
	var total time.Duration
	for _, d := range s {
		total += d
	}
	if len(s) != 9 || s[0] != 5*time.Second || s.Max() != 24*time.Hour {
		t.Errorf("DefaultSchedule() = %v, want 9 waits from 5s to 24h", s)
	}
	if total < 70*time.Hour || total > 80*time.Hour {
		t.Errorf("DefaultSchedule() sums to %v", total)
	}
}

func TestDelayJitter(t *testing.T) {
	s := Schedule{time.Second, 10 * time.Second}
	tests := []struct {
		retried int
		base    time.Duration
	}{{-1, time.Second}, {0, time.Second}, {1, 10 * time.Second}, {7, 10 * time.Second}}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := s.Delay(tt.retried)
			lo, hi := time.Duration(float64(tt.base)*0.9), time.Duration(float64(tt.base)*1.1)
			if d < lo || d > hi {
				t.Fatalf("Delay(%d) = %v, want within %v..%v", tt.retried, d, lo, hi)
			}
			seen[d] = true
		}
		if len(seen) < 50 {
			t.Errorf("Delay(%d) took %d distinct values in 200 calls: no jitter", tt.retried, len(seen))
		}
	}
	if d := (Schedule{}).Delay(0); d != 0 {
		t.Errorf("empty Schedule.Delay = %v, want 0", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{" 0 ", 0, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tt := range tests {
		got, ok := RetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestClassify(t *testing.T) {
	now := time.Now()
	tests := []struct {
		code     int
		header   string
		want     Outcome
		wantWait time.Duration
	}{
		{200, "", OutcomeDelivered, 0},
		{204, "", OutcomeDelivered, 0},
		{301, "", OutcomeRetry, 0},
		{400, "", OutcomeRetry, 0},
		{410, "", OutcomeGone, 0},
		{429, "3", OutcomeRetry, 3 * time.Second},
		{429, "", OutcomeRetry, 0},
		{500, "3", OutcomeRetry, 0}, // Retry-After counts only on 429 and 503
		{503, "12", OutcomeRetry, 12 * time.Second},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.header != "" {
			h.Set("Retry-After", tt.header)
		}
		got, wait := Classify(tt.code, h, now)
		if got != tt.want || wait != tt.wantWait {
			t.Errorf("Classify(%d, Retry-After %q) = %s, %v; want %s, %v", tt.code, tt.header, got, wait, tt.want, tt.wantWait)
		}
	}
}
