package store_test

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/store"
)

// leaseStep is one call of a lease walk and the TargetBusy it must
// answer (nil: acquired).
type leaseStep struct {
	name string
	do   func() (*store.TargetBusy, error)
	want *store.TargetBusy
}

// runLeaseSteps runs steps in order, stopping at the first that answers
// other than it must.
func runLeaseSteps(t *testing.T, steps []leaseStep) {
	t.Helper()
	for _, st := range steps {
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if (got == nil) != (st.want == nil) || (got != nil && *got != *st.want) {
			t.Fatalf("%s: busy = %+v, want %+v", st.name, got, st.want)
		}
	}
}

// TestTargetLeases walks the target leases through one real redis-server:
// all or nothing, re-entrant for the holding job, queue order by creation
// time, a waiter that stopped asking loses its place, release frees the
// host for the first waiter, renewal only by the holder.
func TestTargetLeases(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	const (
		a, b = "127.0.0.1:8080", "127.0.0.1:9090"
		ttl  = time.Minute
	)
	stale := 2 * time.Second
	at := func(sec int) store.TargetWait {
		return store.TargetWait{Order: base.Add(time.Duration(sec) * time.Second), Stale: stale}
	}
	acquire := func(id string, sec int, hosts ...string) func() (*store.TargetBusy, error) {
		return func() (*store.TargetBusy, error) { return s.AcquireTargets(ctx, id, hosts, ttl, at(sec)) }
	}
	steps := []leaseStep{
		{"j1 takes a", acquire("j1", 1, a), nil},
		{"j1 again: re-entrant", acquire("j1", 1, a), nil},
		{"j3 (created third) waits for a held by j1", acquire("j3", 3, a, b), &store.TargetBusy{Host: a, Job: "j1"}},
		{"all or nothing: b was not taken for j3", func() (*store.TargetBusy, error) {
			return holderIs(t, s, b, ""), nil
		}, nil},
		{"j2 (created second) queues ahead of j3", acquire("j2", 2, a), &store.TargetBusy{Host: a, Job: "j1"}},
		{"j1 releases a", func() (*store.TargetBusy, error) { return nil, s.ReleaseTargets(ctx, "j1", []string{a}) }, nil},
		{"j3 asks first but j2 is ahead", acquire("j3", 3, a, b), &store.TargetBusy{Host: a, Job: "j2", Ahead: true}},
		{"j4 on b alone is not held up by the queue of a", acquire("j4", 4, b), nil},
		{"j2 takes a", acquire("j2", 2, a), nil},
		{"j3 now waits for a held by j2, and for b held by j4", acquire("j3", 3, a, b), &store.TargetBusy{Host: a, Job: "j2"}},
		{"j4 ends", func() (*store.TargetBusy, error) { return nil, s.ReleaseTargets(ctx, "j4", []string{b}) }, nil},
		{"j6 (created sixth) finds b free but j3 waiting for it", acquire("j6", 6, b), &store.TargetBusy{Host: b, Job: "j3", Ahead: true}},
		{"j2 ends", func() (*store.TargetBusy, error) { return nil, s.ReleaseTargets(ctx, "j2", []string{a}) }, nil},
		{"j3 takes both", acquire("j3", 3, a, b), nil},
		{"both are j3's", func() (*store.TargetBusy, error) {
			holderIs(t, s, a, "j3")
			return holderIs(t, s, b, "j3"), nil
		}, nil},
	}
	runLeaseSteps(t, steps)

	// Renewal: only the holder's counts; another job's lease is reported.
	if ok, err := s.RenewTargets(ctx, "j3", []string{a, b}, 2*ttl); err != nil || !ok {
		t.Fatalf("RenewTargets(holder) = %v, %v; want true", ok, err)
	}
	if pttl := rdb.PTTL(ctx, "benchq:{targets}:lease:"+a).Val(); pttl <= ttl {
		t.Errorf("lease TTL after renewal = %v, want > %v", pttl, ttl)
	}
	if ok, err := s.RenewTargets(ctx, "j5", []string{a}, ttl); err != nil || ok {
		t.Errorf("RenewTargets(not the holder) = %v, %v; want false", ok, err)
	}
	if busy, err := s.AcquireTargets(ctx, "j6", []string{b}, ttl, at(6)); err != nil || busy == nil || busy.Job != "j3" {
		t.Fatalf("j6 while j3 runs = %+v, %v; want waiting for j3", busy, err)
	}
	if err := s.ReleaseTargets(ctx, "j6", []string{b}); err != nil { // j6 is canceled
		t.Fatal(err)
	}
	if err := s.ReleaseTargets(ctx, "j5", []string{a, b}); err != nil {
		t.Fatal(err)
	}
	holderIs(t, s, a, "j3") // another job's release leaves it
	if err := s.ReleaseTargets(ctx, "j3", []string{a, b}); err != nil {
		t.Fatal(err)
	}
	// A renewal after the release does not take the host back.
	if ok, err := s.RenewTargets(ctx, "j3", []string{a}, ttl); err != nil || !ok {
		t.Fatalf("RenewTargets(released) = %v, %v; want true (no other holder)", ok, err)
	}
	holderIs(t, s, a, "")

	// A waiter that stops asking loses its place after the staleness bound.
	if _, err := s.AcquireTargets(ctx, "h", []string{a}, ttl, at(0)); err != nil {
		t.Fatal(err)
	}
	if busy, err := s.AcquireTargets(ctx, "early", []string{a}, ttl, at(-10)); err != nil || busy == nil || busy.Job != "h" {
		t.Fatalf("early = %+v, %v; want waiting for h", busy, err)
	}
	if err := s.ReleaseTargets(ctx, "h", []string{a}); err != nil {
		t.Fatal(err)
	}
	if busy, err := s.AcquireTargets(ctx, "late", []string{a}, ttl, at(10)); err != nil || busy == nil || !busy.Ahead || busy.Job != "early" {
		t.Fatalf("late while early asks = %+v, %v; want waiting behind early", busy, err)
	}
	time.Sleep(stale + 200*time.Millisecond)
	if busy, err := s.AcquireTargets(ctx, "late", []string{a}, ttl, at(10)); err != nil || busy != nil {
		t.Fatalf("late after early went silent = %+v, %v; want acquired", busy, err)
	}
	if busy, err := s.AcquireTargets(ctx, "early", []string{a}, ttl, at(-10)); err != nil || busy == nil || busy.Job != "late" {
		t.Fatalf("early asking again = %+v, %v; want waiting for late", busy, err)
	}
	if err := s.ReleaseTargets(ctx, "late", []string{a}); err != nil {
		t.Fatal(err)
	}
	if busy, err := s.AcquireTargets(ctx, "early", []string{a}, ttl, at(-10)); err != nil || busy != nil {
		t.Fatalf("early after late ended = %+v, %v; want acquired (back in its place)", busy, err)
	}
	if n := rdb.Exists(ctx, "benchq:{targets}:queue:"+a, "benchq:{targets}:seen:"+a, "benchq:{targets}:shared:"+a).Val(); n != 0 {
		t.Errorf("%d queue keys left with nobody waiting, want 0", n)
	}
}

// holderIs fails the test unless host is held exclusively by want ("":
// by nobody).
func holderIs(t *testing.T, s *store.Store, host, want string) *store.TargetBusy {
	t.Helper()
	got, _, err := s.TargetHolders(t.Context(), host)
	if err != nil || got != want {
		t.Fatalf("holder of %s = %q, %v; want %q", host, got, err, want)
	}
	return nil
}

// TestSharedTargetLeases: jobs that opted out of exclusivity share a
// host with each other, never with an exclusive job, and a stream of them
// cannot starve an exclusive job waiting for the host.
func TestSharedTargetLeases(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	const (
		a   = "127.0.0.1:8080"
		ttl = time.Minute
	)
	acquire := func(id string, sec int, shared bool) func() (*store.TargetBusy, error) {
		return func() (*store.TargetBusy, error) {
			return s.AcquireTargets(ctx, id, []string{a}, ttl, store.TargetWait{
				Shared: shared, Order: base.Add(time.Duration(sec) * time.Second), Stale: time.Minute})
		}
	}
	release := func(id string) func() (*store.TargetBusy, error) {
		return func() (*store.TargetBusy, error) { return nil, s.ReleaseTargets(ctx, id, []string{a}) }
	}
	steps := []leaseStep{
		{"s1 shares a", acquire("s1", 1, true), nil},
		{"s2 shares a with s1", acquire("s2", 2, true), nil},
		{"x3 (exclusive) waits for the sharers", acquire("x3", 3, false), &store.TargetBusy{Host: a, Job: "s1"}},
		{"s4 (shared, later) queues behind x3", acquire("s4", 4, true), &store.TargetBusy{Host: a, Job: "x3", Ahead: true}},
		{"s1 ends", release("s1"), nil},
		{"x3 still waits for s2", acquire("x3", 3, false), &store.TargetBusy{Host: a, Job: "s2"}},
		{"s2 ends", release("s2"), nil},
		{"x3 takes a", acquire("x3", 3, false), nil},
		{"s4 waits for x3", acquire("s4", 4, true), &store.TargetBusy{Host: a, Job: "x3"}},
		{"x3 ends", release("x3"), nil},
		{"s4 shares a", acquire("s4", 4, true), nil},
	}
	runLeaseSteps(t, steps)
	x, shared, err := s.TargetHolders(ctx, a)
	if err != nil || x != "" || len(shared) != 1 || shared[0] != "s4" {
		t.Fatalf("holders = %q, %q, %v; want s4 sharing", x, shared, err)
	}
	// A sharer renews its own lease; a release of it leaves the host free.
	if ok, err := s.RenewTargets(ctx, "s4", []string{a}, ttl); err != nil || !ok {
		t.Fatalf("RenewTargets(s4) = %v, %v", ok, err)
	}
	if err := s.ReleaseTargets(ctx, "s4", []string{a}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RenewTargets(ctx, "s4", []string{a}, ttl); err != nil || !ok {
		t.Fatalf("RenewTargets(s4 released) = %v, %v", ok, err)
	}
	if x, shared, err := s.TargetHolders(ctx, a); err != nil || x != "" || len(shared) != 0 {
		t.Fatalf("holders after release and a late renewal = %q, %q, %v; want none", x, shared, err)
	}
}
