package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the sentinels of StartSentinel monitor.
const SentinelMaster = "benchq"

// Sentinel is a master, one replica and one sentinel watching them, on
// loopback, owned by one test. The sentinel declares the master down
// after a second without an answer and then promotes the replica.
type Sentinel struct {
	Master, Replica *Server
	Sentinel        *Server
}

// sentinelReady bounds the setup's waits (replica in sync, sentinel aware
// of the replica).
const sentinelReady = 20 * time.Second

// StartSentinel starts the master, the replica (replicaof the master) and
// the sentinel, and waits until the replica is in sync and the sentinel
// knows it, so a failover can promote it from then on.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	st := &Sentinel{Master: Start(t)}
	host, port, _ := net.SplitHostPort(st.Master.Addr)
	st.Replica = startMode(t, false, func(*Server) ([]string, error) {
		return []string{"--replicaof", host, port}, nil
	})
	st.Sentinel = startMode(t, false, func(s *Server) ([]string, error) {
		// A sentinel rewrites its config file, so it gets one of its own.
		conf := filepath.Join(s.dir, "sentinel.conf")
		body := fmt.Sprintf("sentinel monitor %[1]s %[2]s %[3]s 1\n"+
			"sentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 10000\n", SentinelMaster, host, port)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, err
		}
		return []string{conf, "--sentinel"}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), sentinelReady)
	defer cancel()
	rc := redis.NewClient(&redis.Options{Addr: st.Replica.Addr, MaxRetries: -1})
	defer rc.Close()
	err := poll(ctx, func() error {
		info, err := rc.Info(ctx, "replication").Result()
		if err == nil && !strings.Contains(info, "master_link_status:up") {
			err = fmt.Errorf("replica not in sync: %q", info)
		}
		return err
	})
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: st.Sentinel.Addr, MaxRetries: -1})
	defer sc.Close()
	err = poll(ctx, func() error {
		replicas, err := sc.Replicas(ctx, SentinelMaster).Result()
		if err == nil && len(replicas) == 0 {
			err = fmt.Errorf("sentinel knows no replica of %s yet", SentinelMaster)
		}
		return err
	})
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return st
}

// URL is the redis+sentinel:// URL of the sentinel and master name, as
// benchq's --redis-url takes it.
func (st *Sentinel) URL() string {
	return "redis+sentinel://" + st.Sentinel.Addr + "?master_name=" + SentinelMaster
}

// MasterAddr asks the sentinel which address it holds for the master now.
func (st *Sentinel) MasterAddr(t testing.TB) string {
	t.Helper()
	sc := redis.NewSentinelClient(&redis.Options{Addr: st.Sentinel.Addr})
	defer sc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hp, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
	if err != nil || len(hp) != 2 {
		t.Fatalf("redistest: SENTINEL get-master-addr-by-name: %v %v", hp, err)
	}
	return net.JoinHostPort(hp[0], hp[1])
}

// WaitPromoted waits up to limit until the sentinel names the replica as
// master and the replica says it is one, and returns how long that took.
func (st *Sentinel) WaitPromoted(t testing.TB, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	rc := redis.NewClient(&redis.Options{Addr: st.Replica.Addr, MaxRetries: -1})
	defer rc.Close()
	sc := redis.NewSentinelClient(&redis.Options{Addr: st.Sentinel.Addr, MaxRetries: -1})
	defer sc.Close()
	err := poll(ctx, func() error {
		hp, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		if err != nil {
			return err
		}
		if len(hp) != 2 || net.JoinHostPort(hp[0], hp[1]) != st.Replica.Addr {
			return fmt.Errorf("sentinel names %v as master", hp)
		}
		info, err := rc.Info(ctx, "replication").Result()
		if err == nil && !strings.Contains(info, "role:master") {
			err = fmt.Errorf("replica not promoted yet")
		}
		return err
	})
	if err != nil {
		t.Fatalf("redistest: no failover within %s: %v", limit, err)
	}
	return time.Since(start)
}
