package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of masters without replicas on loopback,
// owned by one test: every slot served, cluster_state ok on every node.
type Cluster struct {
	Nodes []*Server
}

// clusterReady bounds the wait for every node to report cluster_state:ok.
const clusterReady = 20 * time.Second

// StartCluster starts masters redis-server processes in cluster mode on
// free ports, joins them with redis-cli --cluster create (which splits
// the slots evenly) and waits until every node says the cluster is ok. It
// needs redis-cli besides redis-server, skipped or failed like Binary.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	cli := cliBinary(t)
	c := &Cluster{}
	for range masters {
		c.Nodes = append(c.Nodes, startMode(t, false, clusterNode))
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterReady)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := c.waitOK(ctx); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return c
}

// clusterNode makes a server a cluster node. Its bus port is picked like
// its port, not derived (port+10000 may be taken or past 65535).
func clusterNode(s *Server) ([]string, error) {
	bus, err := freePort()
	if err != nil {
		return nil, err
	}
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(s.dir, "nodes.conf"),
		"--cluster-port", strconv.Itoa(bus),
		"--cluster-node-timeout", "5000",
	}, nil
}

// Addrs are the nodes' host:port addresses.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// URL is the redis+cluster:// URL naming every node, as benchq's
// --redis-url takes it.
func (c *Cluster) URL() string {
	addrs := c.Addrs()
	u := "redis+cluster://" + addrs[0]
	for i, a := range addrs[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + a
	}
	return u
}

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// waitOK waits until every node reports cluster_state:ok and knows every
// other node, so a client's first CLUSTER SLOTS sees the whole cluster.
func (c *Cluster) waitOK(ctx context.Context) error {
	for _, n := range c.Nodes {
		rc := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		err := poll(ctx, func() error {
			info, err := rc.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			want := fmt.Sprintf("cluster_known_nodes:%d\r\n", len(c.Nodes))
			if !strings.Contains(info, "cluster_state:ok\r\n") || !strings.Contains(info, want) {
				return fmt.Errorf("not ready: %q", info)
			}
			return nil
		})
		_ = rc.Close()
		if err != nil {
			return fmt.Errorf("cluster node %s: %w", n.Addr, err)
		}
	}
	return nil
}

// poll runs fn every 50 ms until it succeeds or ctx ends, and returns
// its last error then.
func poll(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// cliBinary returns the path of redis-cli, skipping the test without it
// (failing it under CI), as Binary does for redis-server.
func cliBinary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-cli")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redistest: redis-cli not on PATH under CI: %v", err)
		}
		t.Skip("redistest: redis-cli not installed (apt-get install -y redis-tools); skipping cluster test")
	}
	return bin
}
