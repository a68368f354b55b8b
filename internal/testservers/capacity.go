package testservers

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// CapacityTarget is a loopback server with a known capacity: Slots
// requests in service at once, each held Hold, so it serves at most
// Slots/Hold requests a second, and a request that finds every slot busy
// waits in line for the first to free (first come, first served). Below
// that rate a request's latency is Hold plus the loopback's; above it the
// line, and the latency, grow without bound. The capacity search's tests
// measure it against this.
//
// Service is kept on a schedule rather than by holding a slot for a
// sleep: each slot's next free instant advances by exactly Hold per
// request it serves, and a request sleeps until its own end. A sleep that
// overshoots (a busy machine wakes a goroutine late) then delays that one
// answer, never the slot's next request, so the capacity is Slots/Hold
// however loaded the test machine is.
type CapacityTarget struct {
	URL   string // http://127.0.0.1:PORT/
	Slots int
	Hold  time.Duration

	mu   sync.Mutex
	free []time.Time // per slot, when it finishes its last request
}

// StartCapacity serves a CapacityTarget of slots × hold until the test
// ends.
func StartCapacity(t testing.TB, slots int, hold time.Duration) *CapacityTarget {
	t.Helper()
	if slots < 1 || hold <= 0 {
		t.Fatalf("testservers: capacity target needs slots >= 1 and hold > 0, got %d and %s", slots, hold)
	}
	ct := &CapacityTarget{Slots: slots, Hold: hold, free: make([]time.Time, slots)}
	ct.URL = StartFasthttp(t, ct.serve) + "/"
	return ct
}

// Capacity is the rate the target sustains, in requests a second.
func (ct *CapacityTarget) Capacity() float64 { return float64(ct.Slots) / ct.Hold.Seconds() }

func (ct *CapacityTarget) serve(c *fasthttp.RequestCtx) {
	time.Sleep(time.Until(ct.book(time.Now())))
	c.SetContentType("text/plain")
	c.SetBodyString("ok\n")
}

// book gives a request arriving at now the slot that frees first and
// returns when its service ends.
func (ct *CapacityTarget) book(now time.Time) time.Time {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	i := slices.IndexFunc(ct.free, func(f time.Time) bool {
		return !f.After(slices.MinFunc(ct.free, time.Time.Compare))
	})
	start := ct.free[i]
	if now.After(start) {
		start = now
	}
	ct.free[i] = start.Add(ct.Hold)
	return ct.free[i]
}
