package client

import (
	"math/rand/v2"
	"time"
)

// backoff spaces the attempts at reopening an event stream: base doubled
// with each attempt in a row, up to max, with "equal jitter" (between
// half and all of it) so clients dropped together come back spread out.
// A server's Retry-After is a floor, with up to a fifth more for the
// same reason; max bounds that too.
type backoff struct {
	base, max time.Duration
	attempt   int
}

// next returns the pause before the next attempt and counts it.
func (b *backoff) next(retryAfter time.Duration) time.Duration {
	d := b.base << min(b.attempt, 16)
	if d <= 0 || d > b.max {
		d = b.max
	}
	b.attempt++
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = retryAfter + rand.N(retryAfter/5+1)
	}
	return min(d, b.max)
}

// reset starts the doubling over, after an attempt that worked.
func (b *backoff) reset() { b.attempt = 0 }
