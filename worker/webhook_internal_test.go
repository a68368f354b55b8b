package worker

import (
	"testing"
	"time"
)

func TestNotBefore(t *testing.T) {
	tests := []struct {
		now  string
		d    time.Duration
		want time.Duration
	}{
		{"10:00:00.000", time.Second, time.Second},
		{"10:00:00.250", time.Second, 1750 * time.Millisecond},
		{"10:00:00.999", 0, time.Millisecond},
		{"10:00:00.500", 2500 * time.Millisecond, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		now, err := time.Parse("15:04:05.000", tt.now)
		if err != nil {
			t.Fatal(err)
		}
		got := notBefore(now, tt.d)
		if got != tt.want {
			t.Errorf("notBefore(%s, %v) = %v, want %v", tt.now, tt.d, got, tt.want)
		}
		if end := now.Add(got); end.Unix() < now.Add(tt.d).Unix() || end.Before(now.Add(tt.d)) || end.Nanosecond() != 0 {
			t.Errorf("notBefore(%s, %v) ends at %v, want the first whole second at or after now+d", tt.now, tt.d, end)
		}
	}
}
