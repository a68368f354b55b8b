package worker

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// errOwnerBusy: the delivery's owner already has its share of the delivery
// server's slots in flight. The task goes back to the queue for a while
// (ownerBusyError says how long), a retry asynq does not count
// (webhookIsFailure), so it neither blocks a slot nor uses up its
// schedule.
var errOwnerBusy = errors.New("worker: owner's webhook deliveries at their share")

// How long a delivery sent back for its owner's share waits: ownerBusyDelay
// the first time, doubling each time in a row up to ownerBusyMaxDelay, so
// an owner with thousands of deliveries to receivers that never answer
// costs the queue a few hundred send-backs a second, not thousands, while
// one with a short burst to a healthy receiver is served within seconds.
// The delivery server's scan of retries (up to a second) adds to it.
const (
	ownerBusyDelay    = 500 * time.Millisecond
	ownerBusyMaxDelay = 8 * time.Second
	// maxSentBack bounds the send-back counts kept; past it they start
	// over (a task another process delivered leaves its count behind).
	maxSentBack = 1 << 14
)

// ownerBusyError is errOwnerBusy with the task's wait.
type ownerBusyError struct {
	wait time.Duration
	msg  string
}

func (e *ownerBusyError) Error() string { return e.msg }
func (e *ownerBusyError) Unwrap() error { return errOwnerBusy }

// ownerShares bounds the deliveries of one owner (API key) in flight in
// this process, so one tenant's receivers that never answer hold at most
// its share of the slots, each for one attempt's timeout, and other
// tenants' deliveries go on in the rest. While fewer than half the slots
// are in use an owner may go over its share: a burst to a healthy
// receiver is not held to the share on an idle server, and one owner
// still never holds more than half. Each delivery process keeps its own
// count: a share is per process, as the slots are. The empty owner (open
// mode, one tenant) is not bounded.
type ownerShares struct {
	limit    int // an owner's share
	free     int // in flight below which an owner may go over its share
	mu       sync.Mutex
	total    int            // owners' deliveries in flight
	busy     map[string]int // owner -> deliveries in flight
	sentBack map[string]int // task ID -> times sent back in a row
}

func newOwnerShares(limit, slots int) *ownerShares {
	return &ownerShares{limit: limit, free: slots / 2, busy: make(map[string]int), sentBack: make(map[string]int)}
}

// acquire takes one of owner's slots for task id and reports whether it
// had one free; forced, it takes one whatever the share. A true answer is
// to be paired with release; after a false one, wait says how long the
// task waits before asking again.
func (s *ownerShares) acquire(owner, id string, forced bool) bool {
	if owner == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[owner] >= s.limit && s.total >= s.free && !forced {
		return false
	}
	s.busy[owner]++
	s.total++
	delete(s.sentBack, id)
	return true
}

// wait counts one more send-back of task id in a row and returns its
// wait, with ±25 % jitter so that tasks sent back together come back
// spread.
func (s *ownerShares) wait(id string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sentBack) >= maxSentBack {
		clear(s.sentBack)
	}
	n := s.sentBack[id]
	s.sentBack[id] = n + 1
	d := ownerBusyMaxDelay
	if n < 5 && ownerBusyDelay<<n < ownerBusyMaxDelay {
		d = ownerBusyDelay << n
	}
	return d - d/4 + rand.N(d/2+1)
}

// release gives back a slot acquire took.
func (s *ownerShares) release(owner string) {
	if owner == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.busy[owner]--; s.busy[owner] <= 0 {
		delete(s.busy, owner)
	}
}
