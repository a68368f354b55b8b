package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/store"
)

// TestShardRound walks a round through its barrier on a real Redis: joins
// count up, the start is set once on Redis's clock, results are kept per
// shard, and once the round is aborted nothing joins or stores any more.
func TestShardRound(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	const lease, ttl = time.Minute, time.Hour
	for i, w := range []string{"w0", "w1"} {
		n, err := s.JoinShard(ctx, "j1", "r1", i, w, lease, ttl)
		if err != nil || n != i+1 {
			t.Fatalf("join %d = %d, %v; want %d joined", i, n, err, i+1)
		}
	}
	before, err := s.RedisTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start, err := s.StartShards(ctx, "j1", "r1", 200*time.Millisecond, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if d := start.Sub(before); d < 200*time.Millisecond || d > time.Second {
		t.Errorf("start is %s after Redis's TIME, want the 200ms margin (and little more)", d)
	}
	again, err := s.StartShards(ctx, "j1", "r1", 5*time.Second, ttl)
	if err != nil || !again.Equal(start) {
		t.Errorf("second start = %s, %v; want the first, %s", again, err, start)
	}
	if _, err := s.JoinShard(ctx, "j1", "r1", 2, "late", lease, ttl); !errors.Is(err, store.ErrRoundOver) {
		t.Errorf("join after the start = %v, want ErrRoundOver", err)
	}
	if err := s.PutShardResult(ctx, "j1", "r1", 1, []byte(`{"n":1}`), ttl); err != nil {
		t.Fatal(err)
	}
	st, err := s.ShardRoundState(ctx, "j1", "r1", 3)
	if err != nil {
		t.Fatal(err)
	}
	if st.Joined[0] != "w0" || st.Joined[1] != "w1" || len(st.Joined) != 2 || !st.Start.Equal(start) || st.Abort != "" ||
		!st.Results[1] || st.Results[0] || !st.Leased[0] || !st.Leased[1] || st.Leased[2] {
		t.Errorf("state = %+v", st)
	}
	if ok, err := s.RenewShardLease(ctx, "j1", "r1", 1, "someone else", lease); ok || err != nil {
		t.Errorf("renew by another holder = %v, %v; want false", ok, err)
	}
	if err := s.ReleaseShardLease(ctx, "j1", "r1", 1, "w1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.AbortShards(ctx, "j1", "r1", "shard 1 died", ttl); !ok || err != nil {
		t.Fatalf("abort = %v, %v; want the first abort", ok, err)
	}
	if ok, _ := s.AbortShards(ctx, "j1", "r1", "again", ttl); ok {
		t.Error("second abort replaced the first")
	}
	if err := s.PutShardResult(ctx, "j1", "r1", 0, []byte(`{}`), ttl); !errors.Is(err, store.ErrRoundOver) {
		t.Errorf("result after abort = %v, want ErrRoundOver", err)
	}
	if _, err := s.StartShards(ctx, "j1", "r1", 0, ttl); !errors.Is(err, store.ErrRoundOver) {
		t.Errorf("start after abort = %v, want ErrRoundOver", err)
	}
	st, _ = s.ShardRoundState(ctx, "j1", "r1", 3)
	if st.Abort != "shard 1 died" || st.Leased[1] {
		t.Errorf("state after abort = %+v", st)
	}
	res, err := s.ShardResults(ctx, "j1", "r1")
	if err != nil || string(res[1]) != `{"n":1}` || len(res) != 1 {
		t.Errorf("results = %v, %v", res, err)
	}
	if d := rdb.PTTL(ctx, "benchq:job:{j1}:shards:r1:results").Val(); d <= 0 || d > ttl {
		t.Errorf("results TTL = %s, want the round's", d)
	}
	if err := s.DropShardRound(ctx, "j1", "r1"); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "benchq:job:{j1}:shards:r1:state", "benchq:job:{j1}:shards:r1:joined", "benchq:job:{j1}:shards:r1:results").Val(); n != 0 {
		t.Errorf("%d round keys left after drop", n)
	}
}

// TestShardJoinAfterAbort: a shard task picked up after its round was
// given up (the barrier waited too long) joins nothing and takes no lease.
func TestShardJoinAfterAbort(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	if _, err := s.AbortShards(ctx, "j1", "r1", "needed 3, found 2", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.JoinShard(ctx, "j1", "r1", 1, "w1", time.Minute, time.Hour); !errors.Is(err, store.ErrRoundOver) {
		t.Errorf("join = %v, want ErrRoundOver", err)
	}
	if rdb.Exists(ctx, "benchq:job:{j1}:shards:r1:lease:1").Val() != 0 {
		t.Error("a refused join took a lease")
	}
}
