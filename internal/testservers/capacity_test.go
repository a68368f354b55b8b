package testservers_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// A closed-model load with twice as many workers as slots keeps every
// slot busy, so the target's throughput is its capacity, Slots/Hold. The
// run's ends cost a few dozen requests' worth (the dials before the
// first, the requests in flight at the stop, which are discarded), under
// 3 % of a 4 s run: 5 % is the bound.
func TestCapacityTargetServesItsCapacity(t *testing.T) {
	for _, c := range []struct {
		slots int
		hold  time.Duration
	}{{8, 10 * time.Millisecond}, {4, 10 * time.Millisecond}} {
		ct := testservers.StartCapacity(t, c.slots, c.hold)
		m, err := loadgen.Run(context.Background(), measure.Plan{
			URLs: []string{ct.URL}, Method: "GET", KeepAlive: true,
			Concurrency: 2 * c.slots, Duration: 4 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		rps := float64(m.Complete) / m.Elapsed.Seconds()
		t.Logf("%d slots × %s: capacity %.0f req/s, measured %.0f req/s (%d requests, %d failed)",
			c.slots, c.hold, ct.Capacity(), rps, m.Complete, m.Failed)
		if m.Failed > 0 || math.Abs(rps/ct.Capacity()-1) > 0.05 {
			t.Errorf("closed model at c=%d: %.0f req/s, %d failed; want %.0f ± 5 %%", 2*c.slots, rps, m.Failed, ct.Capacity())
		}
	}
}
