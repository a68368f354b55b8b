package worker

import (
	"errors"
	"sync"
	"time"
)

// errOwnerBusy: the delivery's owner already has its share of the delivery
// server's slots in flight. The task goes back to the queue for
// ownerBusyDelay, a retry asynq does not count (webhookIsFailure), so it
// neither blocks a slot nor uses up its schedule.
var errOwnerBusy = errors.New("worker: owner's webhook deliveries at their share")

// ownerBusyDelay is how soon a delivery sent back for its owner's share is
// tried again; the delivery server's scan of retries (up to a second)
// adds to it.
const ownerBusyDelay = 500 * time.Millisecond

// ownerShares bounds the deliveries of one owner (API key) in flight in
// this process, so one tenant's receivers that never answer hold at most
// its share of the slots, each for one attempt's timeout, and other
// tenants' deliveries go on in the rest. Each delivery process keeps its
// own count: a share is per process, as the slots are. The empty owner
// (open mode, one tenant) is not bounded.
type ownerShares struct {
	limit int
	mu    sync.Mutex
	busy  map[string]int
}

func newOwnerShares(limit int) *ownerShares {
	return &ownerShares{limit: limit, busy: make(map[string]int)}
}

// acquire takes one of owner's slots and reports whether it had one free;
// forced, it takes one whatever the share. A true answer is to be paired
// with release.
func (s *ownerShares) acquire(owner string, forced bool) bool {
	if owner == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[owner] >= s.limit && !forced {
		return false
	}
	s.busy[owner]++
	return true
}

// release gives back a slot acquire took.
func (s *ownerShares) release(owner string) {
	if owner == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[owner]--; s.busy[owner] <= 0 {
		delete(s.busy, owner)
	}
}
