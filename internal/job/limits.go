package job

import "time"

// Limits bound what one job may ask for. The service applies defaults; an
// API key's quota may lower or raise them. A zero field takes the
// DefaultLimits value, so a partly filled quota is safe.
type Limits struct {
	MaxConcurrency int           // per run (ab -c)
	MaxRequests    int           // per run (ab -n), warm-up included
	MaxPoints      int           // points of the sweep
	MaxRuns        int           // points × repeats
	MaxDuration    time.Duration // per run (ab -t), and per request timeout
	MaxBodyBytes   int           // request body sent to a target
	MaxRate        float64       // request starts per second in the open model
}

// DefaultLimits are generous for one load machine yet stop a typo (an extra
// zero) from tying up a worker for days.
func DefaultLimits() Limits {
	return Limits{
		MaxConcurrency: 10_000,
		MaxRequests:    10_000_000,
		MaxPoints:      1_000,
		MaxRuns:        1_000,
		MaxDuration:    time.Hour,
		MaxBodyBytes:   512 << 10, // half the API's 1 MiB cap on the whole spec
		MaxRate:        100_000,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxConcurrency <= 0 {
		l.MaxConcurrency = d.MaxConcurrency
	}
	if l.MaxRequests <= 0 {
		l.MaxRequests = d.MaxRequests
	}
	if l.MaxPoints <= 0 {
		l.MaxPoints = d.MaxPoints
	}
	if l.MaxRuns <= 0 {
		l.MaxRuns = d.MaxRuns
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = d.MaxDuration
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxRate <= 0 {
		l.MaxRate = d.MaxRate
	}
	return l
}
