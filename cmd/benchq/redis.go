package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/localredis"
)

// redisKind is which Redis a process uses.
type redisKind int

const (
	// redisExternal is the Redis of the configured URL.
	redisExternal redisKind = iota
	// redisChild is the all-in-one's redis-server child, keeping its
	// append-only file in the data directory.
	redisChild
	// redisEmbedded is miniredis inside the process: nothing is kept.
	redisEmbedded
)

// redisPlan is the Redis a configuration gets: its kind, the redis-server
// of a child, and why an embedded one was chosen.
type redisPlan struct {
	kind   redisKind
	bin    string
	reason string
}

// planRedis picks the Redis: the URL when one is set; else, in the
// all-in-one, a redis-server child when one is installed and there is a
// data directory, since a development service that forgets its jobs on
// every restart surprises; else the embedded one.
func planRedis(cfg config.Config, lookPath func(string) (string, error)) redisPlan {
	switch {
	case cfg.RedisURL != "":
		return redisPlan{kind: redisExternal}
	case cfg.Ephemeral:
		return redisPlan{kind: redisEmbedded, reason: "--ephemeral"}
	case cfg.DataDir == "":
		return redisPlan{kind: redisEmbedded, reason: "no data directory: neither --data-dir, XDG_DATA_HOME nor HOME is set"}
	}
	bin, err := lookPath("redis-server")
	if err != nil {
		return redisPlan{kind: redisEmbedded, reason: "redis-server is not on PATH; install it (apt-get install redis-server) to keep them in " + cfg.DataDir}
	}
	return redisPlan{kind: redisChild, bin: bin}
}

// redisConn is the process's one Redis client and the Redis the process
// started for it, if any.
type redisConn struct {
	rdb    redis.UniversalClient
	plan   redisPlan
	addrs  []string // of an external Redis, for the log: no credentials
	mini   *miniredis.Miniredis
	child  *localredis.Server
	logger *slog.Logger
}

// openRedis connects to the Redis that planRedis picks, starting it first
// when it is the process's own.
func openRedis(ctx context.Context, cfg config.Config, logger *slog.Logger) (*redisConn, error) {
	c := &redisConn{plan: planRedis(cfg, exec.LookPath), logger: logger}
	var opts *redis.UniversalOptions
	switch c.plan.kind {
	case redisExternal:
		o, err := config.ParseRedisURL(cfg.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("benchq: %w", err)
		}
		opts, c.addrs = o, o.Addrs
	case redisChild:
		// Restarted when it dies: the API answers 503 meanwhile, and
		// the append-only file brings the data back.
		child, err := localredis.Start(ctx, localredis.Options{Bin: c.plan.bin, Dir: cfg.DataDir, Logger: logger,
			Restart: localredis.RestartPolicy{Enabled: true}})
		if errors.Is(err, localredis.ErrLocked) {
			return nil, fmt.Errorf("benchq: %w: stop that benchq, or give this one another --data-dir (or --ephemeral)", err)
		}
		if err != nil {
			return nil, fmt.Errorf("benchq: start redis-server in data directory %s (or run with --ephemeral): %w", cfg.DataDir, err)
		}
		c.child = child
		opts = &redis.UniversalOptions{Addrs: []string{child.Socket()}} // a path: go-redis dials it as a unix socket
	case redisEmbedded:
		c.mini = miniredis.NewMiniRedis()
		if err := c.mini.Start(); err != nil {
			return nil, fmt.Errorf("benchq: start embedded redis: %w", err)
		}
		opts = &redis.UniversalOptions{Addrs: []string{c.mini.Addr()}}
	}
	c.rdb = redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.rdb.Ping(pctx).Err(); err != nil {
		_ = c.close(5 * time.Second)
		return nil, fmt.Errorf("benchq: redis ping: %w", err)
	}
	return c, nil
}

// announce logs which Redis the process uses, and warns when it will not
// keep what it is given.
func (c *redisConn) announce(ctx context.Context) {
	switch c.plan.kind {
	case redisEmbedded:
		c.logger.Warn("benchq: Redis: embedded in-memory; jobs, results and API keys are NOT persisted and are lost on exit; loopback targets are allowed with no API key",
			"reason", c.plan.reason, "redis", c.mini.Addr())
		return
	case redisChild:
		c.logger.Info("benchq: Redis: a redis-server child keeps jobs, results and API keys in the data directory (append-only file, fsync every second)",
			"data_dir", c.child.Dir(), "socket", c.child.Socket(), "pid", c.child.Pid(), "redis_url", c.child.URL())
	case redisExternal:
		c.logger.Info("benchq: Redis", "addrs", c.addrs)
	}
	// An evicting Redis drops queued tasks and stored runs under memory
	// pressure without an error anywhere: say so at startup.
	switch p := evictionPolicy(ctx, c.rdb); p {
	case "noeviction":
	case "":
		c.logger.Warn("benchq: cannot read Redis maxmemory-policy; it must be noeviction or jobs and results may be silently evicted")
	default:
		c.logger.Warn("benchq: Redis maxmemory-policy is not noeviction: queued jobs and stored results may be silently evicted", "maxmemory-policy", p)
	}
}

// childDone is closed when the redis-server child exited and restarting
// it was given up; nil (never closed) for any other Redis.
func (c *redisConn) childDone() <-chan struct{} {
	if c.child == nil {
		return nil
	}
	return c.child.Done()
}

// close closes the client, then stops the Redis the process started:
// the child within timeout, so that it flushes its file.
func (c *redisConn) close(timeout time.Duration) error {
	var errs []error
	if c.rdb != nil {
		errs = append(errs, c.rdb.Close())
	}
	if c.mini != nil {
		c.mini.Close()
	}
	if c.child != nil {
		if err := c.child.Stop(timeout); err != nil {
			errs = append(errs, fmt.Errorf("benchq: stop redis-server: %w", err))
		}
	}
	return errors.Join(errs...)
}

// evictionPolicy reads Redis's maxmemory-policy; "" when it cannot be read
// (CONFIG is often disabled on managed Redis, and miniredis lacks it).
func evictionPolicy(ctx context.Context, rdb redis.UniversalClient) string {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	got, err := rdb.ConfigGet(cctx, "maxmemory-policy").Result()
	if err != nil {
		return ""
	}
	return got["maxmemory-policy"]
}

// redisClientLog takes go-redis's own log lines (a failed dial, once per
// pool connection attempt, so dozens a second while Redis is down) to the
// service's logger at debug level: the store classifies the same failures
// and the components log them once, at warn, with the job they hit.
type redisClientLog struct{ log *slog.Logger }

func (l redisClientLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
