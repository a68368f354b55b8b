package worker

import (
	"context"
	"fmt"
	"time"
)

// clockSamples is how many TIME round trips a shard measures its clock
// offset with; the one with the shortest round trip is kept, since its
// midpoint brackets Redis's answer the most tightly.
const clockSamples = 5

// redisClock reads Redis's clock; *store.Store implements it.
type redisClock interface {
	RedisTime(ctx context.Context) (time.Time, error)
}

// clockOffset relates this process's clock to Redis's, on which the
// shards of a run agree their start: Redis's clock read Server at the
// local instant Local (the midpoint of the round trip, with its monotonic
// reading), to within RTT/2.
type clockOffset struct {
	Local  time.Time
	Server time.Time
	RTT    time.Duration
}

// measureClock takes clockSamples round trips of Redis TIME.
func measureClock(ctx context.Context, c redisClock) (clockOffset, error) {
	var best clockOffset
	for i := range clockSamples {
		t0 := time.Now()
		srv, err := c.RedisTime(ctx)
		t1 := time.Now()
		if err != nil {
			return clockOffset{}, fmt.Errorf("worker: measure clock offset: %w", err)
		}
		rtt := t1.Sub(t0)
		if i == 0 || rtt < best.RTT {
			best = clockOffset{Local: t0.Add(rtt / 2), Server: srv, RTT: rtt}
		}
	}
	return best, nil
}

// Offset is Redis's clock minus this process's wall clock.
func (o clockOffset) Offset() time.Duration { return o.Server.Sub(o.Local.Round(0)) }

// LocalAt is the local instant, with a monotonic reading, at which
// Redis's clock reads serverT: sleeping until it is immune to a wall-clock
// step meanwhile.
func (o clockOffset) LocalAt(serverT time.Time) time.Time { return o.Local.Add(serverT.Sub(o.Server)) }

// ServerAt is local instant t on Redis's clock, so the start and end times
// shards on different machines report compare.
func (o clockOffset) ServerAt(t time.Time) time.Time { return t.Round(0).Add(o.Offset()) }
