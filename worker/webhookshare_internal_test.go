package worker

import (
	"errors"
	"fmt"
	"testing"
)

// TestOwnerShares: an owner holds at most its share of slots; a forced
// acquire (a delivery's last attempt) goes over it; released slots are
// free again; the empty owner (open mode) is not bounded.
func TestOwnerShares(t *testing.T) {
	s := newOwnerShares(2)
	steps := []struct {
		owner  string
		forced bool
		want   bool
	}{
		{"a", false, true},
		{"a", false, true},
		{"a", false, false}, // at its share
		{"b", false, true},  // another owner is not held up
		{"a", true, true},   // a last attempt goes over the share
		{"", false, true},
		{"", false, true},
		{"", false, true},
	}
	for i, st := range steps {
		if got := s.acquire(st.owner, st.forced); got != st.want {
			t.Fatalf("step %d: acquire(%q, forced %v) = %v, want %v", i, st.owner, st.forced, got, st.want)
		}
	}
	s.release("a") // the forced one
	if s.acquire("a", false) {
		t.Error("acquire(a) with 2 of 2 still held = true, want false")
	}
	s.release("a")
	if !s.acquire("a", false) {
		t.Error("acquire(a) after a release = false, want true")
	}
	for range 3 {
		s.release("a")
	}
	if len(s.busy) != 1 || s.busy["b"] != 1 {
		t.Errorf("busy = %v after a's slots were all released, want only b's one", s.busy)
	}
}

// TestOwnerBusyIsNotAnAttempt: a delivery sent back for its owner's share
// comes back soon and keeps its retries.
func TestOwnerBusyIsNotAnAttempt(t *testing.T) {
	d := newDeliverer(nil, WebhookConfig{}.withDefaults())
	err := fmt.Errorf("worker: delivery 1 of job j: %w", errOwnerBusy)
	if got := d.retryDelay(3, err, nil); got != ownerBusyDelay {
		t.Errorf("retryDelay(owner busy) = %v, want %v whatever the retries", got, ownerBusyDelay)
	}
	if webhookIsFailure(err) {
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
