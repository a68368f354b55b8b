package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSentinelFailover: what was written through the sentinel's master
// is read back through it after the master is killed and the replica
// promoted.
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a Redis master and waits for the failover; skipped with -short")
	}
	st := StartSentinel(t)
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: []string{st.Sentinel.Addr}})
	t.Cleanup(func() { _ = fc.Close() })
	ctx := context.Background()
	if got := st.MasterAddr(t); got != st.Master.Addr {
		t.Fatalf("sentinel names %s as master, want %s", got, st.Master.Addr)
	}
	if err := fc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := fc.Wait(ctx, 1, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	st.Master.Kill()
	took := st.WaitPromoted(t, 30*time.Second)
	t.Logf("replica promoted %s after the master was killed", took.Round(10*time.Millisecond))
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := fc.Get(ctx, "k").Result()
		if err == nil {
			if got != "v" {
				t.Errorf("GET after failover = %q, want v", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET after failover: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := fc.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Errorf("SET on the promoted replica: %v", err)
	}
}
