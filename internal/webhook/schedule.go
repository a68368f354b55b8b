package webhook

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Schedule is the wait before each retry of a failed delivery: entry n is
// the wait after attempt n+1 failed. Its length is the number of retries,
// so a delivery is attempted len+1 times at most.
type Schedule []time.Duration

// ErrBadSchedule is returned by ParseSchedule.
var ErrBadSchedule = errors.New("webhook: bad backoff schedule")

// jitter is the relative spread of each wait (±10 %), so the deliveries of
// many jobs that finished together do not retry in lockstep.
const jitter = 0.10

// DefaultSchedule retries for about a day: 5s, 5m, 30m, 2h, 5h, 10h, 14h,
// 20h, 24h.
func DefaultSchedule() Schedule {
	return Schedule{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
		5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
}

// ParseSchedule reads "1s,2s,5s": positive Go durations separated by
// commas.
func ParseSchedule(s string) (Schedule, error) {
	var out Schedule
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrBadSchedule, s, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("%w: %q: %s is not positive", ErrBadSchedule, s, d)
		}
		out = append(out, d)
	}
	return out, nil
}

// String writes the schedule as ParseSchedule reads it.
func (s Schedule) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// MaxRetryAfter caps the wait a receiver may ask for with Retry-After. It
// is fixed rather than the schedule's longest wait: a short schedule
// (BENCHQ_WEBHOOK_BACKOFF=1s,2s,5s) must still let a receiver that says
// "come back in a minute" have its minute, while no receiver can park a
// delivery for a year.
const MaxRetryAfter = 24 * time.Hour

// Max is the longest wait of the schedule.
func (s Schedule) Max() time.Duration {
	var m time.Duration
	for _, d := range s {
		m = max(m, d)
	}
	return m
}

// Delay is the wait after the retried-th retry (0 for the first failure),
// with ±10 % jitter; past the end of the schedule the last entry repeats.
func (s Schedule) Delay(retried int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	d := s[min(max(retried, 0), len(s)-1)]
	f := 1 + jitter*(2*rand.Float64()-1)
	return time.Duration(float64(d) * f)
}

// RetryAfter reads a Retry-After header, in seconds or as an HTTP date,
// relative to now. It reports false when the header is absent or
// unreadable; a date in the past is a zero wait.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		const maxSeconds = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(n, maxSeconds)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
