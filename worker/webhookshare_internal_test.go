package worker

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestOwnerShares: while half the slots are in use an owner holds at
// most its share; below that it may go over; a forced acquire (a
// delivery's last attempt) always goes over; released slots are free
// again; the empty owner (open mode) is not bounded.
func TestOwnerShares(t *testing.T) {
	s := newOwnerShares(2, 8) // over the share while fewer than 4 are in flight
	steps := []struct {
		owner  string
		forced bool
		want   bool
	}{
		{"a", false, true},
		{"a", false, true},
		{"a", false, true}, // over its share: 2 of 8 slots in use
		{"b", false, true},
		{"a", false, false}, // 4 in use: a is held to its share
		{"b", false, true},  // b is not
		{"b", false, false},
		{"a", true, true}, // a last attempt goes over the share
		{"", false, true},
		{"", false, true},
	}
	for i, st := range steps {
		if got := s.acquire(st.owner, fmt.Sprintf("task-%d", i), st.forced); got != st.want {
			t.Fatalf("step %d: acquire(%q, forced %v) = %v, want %v", i, st.owner, st.forced, got, st.want)
		}
	}
	if s.busy["a"] != 4 || s.busy["b"] != 2 || s.total != 6 {
		t.Fatalf("busy %v, total %d; want a 4, b 2, total 6", s.busy, s.total)
	}
	s.release("a")
	s.release("a")
	if s.acquire("a", "x", false) {
		t.Error("acquire(a) with 2 of a's and 4 in use = true, want false")
	}
	s.release("a")
	s.release("b")
	if !s.acquire("a", "x", false) {
		t.Error("acquire(a) with 1 of a's in flight = false, want true")
	}
	for range 2 {
		s.release("a")
	}
	s.release("b")
	if len(s.busy) != 0 || s.total != 0 {
		t.Errorf("busy %v, total %d after every slot was released, want none", s.busy, s.total)
	}
}

// TestOwnerBusyWaitBacksOff: a task sent back again and again waits
// longer each time, up to ownerBusyMaxDelay, and starts over once it got
// a slot.
func TestOwnerBusyWaitBacksOff(t *testing.T) {
	s := newOwnerShares(1, 2)
	within := func(d, base time.Duration) bool { return d >= base-base/4 && d <= base+base/4 }
	for i, base := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		if d := s.wait("t1"); !within(d, base) {
			t.Errorf("send-back %d: wait %v, want %v ±25 %%", i+1, d, base)
		}
	}
	if !s.acquire("a", "t1", false) {
		t.Fatal("acquire on an idle server = false")
	}
	if d := s.wait("t1"); !within(d, ownerBusyDelay) {
		t.Errorf("wait after the task got a slot = %v, want %v ±25 %% again", d, ownerBusyDelay)
	}
}

// TestOwnerBusyIsNotAnAttempt: a delivery sent back for its owner's share
// comes back after the wait it was given, and keeps its retries.
func TestOwnerBusyIsNotAnAttempt(t *testing.T) {
	d := newDeliverer(nil, WebhookConfig{}.withDefaults())
	err := &ownerBusyError{wait: 1234 * time.Millisecond, msg: "worker: delivery 1 of job j: at its share"}
	if got := d.retryDelay(3, err, nil); got != err.wait {
		t.Errorf("retryDelay(owner busy) = %v, want %v whatever the retries", got, err.wait)
	}
	if !errors.Is(err, errOwnerBusy) || webhookIsFailure(err) {
		t.Error("webhookIsFailure(owner busy) = true, want false: no attempt was made")
	}
	if !webhookIsFailure(errors.New("status 500")) {
		t.Error("webhookIsFailure(status 500) = false, want true")
	}
}

func TestWebhookConfigPerOwner(t *testing.T) {
	tests := []struct{ concurrency, perOwner, want int }{
		{0, 0, 2}, // 10 slots, a quarter each
		{3, 0, 1},
		{20, 0, 5},
		{4, 9, 4},
		{10, 3, 3},
	}
	for _, tt := range tests {
		c := WebhookConfig{Concurrency: tt.concurrency, PerOwner: tt.perOwner}.withDefaults()
		if c.PerOwner != tt.want {
			t.Errorf("WebhookConfig{Concurrency: %d, PerOwner: %d} defaults to PerOwner %d, want %d", tt.concurrency, tt.perOwner, c.PerOwner, tt.want)
		}
	}
}
