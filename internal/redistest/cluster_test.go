package redistest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestStartCluster: three masters share the slots, and a cluster client
// writes keys that land on every one of them.
func TestStartCluster(t *testing.T) {
	c := StartCluster(t, 3)
	cc := c.Client(t)
	ctx := context.Background()
	shards, err := cc.ClusterShards(ctx).Result()
	if err != nil || len(shards) != 3 {
		t.Fatalf("CLUSTER SHARDS = %d shards, %v; want 3", len(shards), err)
	}
	owners := map[string]bool{}
	for i := range 30 {
		k := "k" + strconv.Itoa(i)
		if err := cc.Set(ctx, k, "v", time.Minute).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
		m, err := cc.MasterForKey(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		owners[m.Options().Addr] = true
	}
	if len(owners) != 3 {
		t.Errorf("30 keys landed on %d masters, want all 3", len(owners))
	}
	// A plain client on one node is redirected for a key of another.
	moved := 0
	for i := range 30 {
		if err := c.Nodes[0].Client(t).Get(ctx, "k"+strconv.Itoa(i)).Err(); err != nil && !errors.Is(err, redis.Nil) {
			moved++
		}
	}
	if moved == 0 {
		t.Error("node 0 served all 30 keys itself: not a cluster")
	}
}
