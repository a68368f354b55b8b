package main

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/config"
)

// openRedis builds the process's one Redis client: from the configured URL,
// or against an embedded miniredis (all-in-one mode without a URL), which
// is returned so Close can stop it.
func openRedis(ctx context.Context, cfg config.Config) (redis.UniversalClient, *miniredis.Miniredis, error) {
	var mini *miniredis.Miniredis
	var opts *redis.UniversalOptions
	if cfg.RedisURL == "" {
		mini = miniredis.NewMiniRedis()
		if err := mini.Start(); err != nil {
			return nil, nil, fmt.Errorf("benchq: start embedded redis: %w", err)
		}
		opts = &redis.UniversalOptions{Addrs: []string{mini.Addr()}}
	} else {
		o, err := config.ParseRedisURL(cfg.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("benchq: %w", err)
		}
		opts = o
	}
	rdb := redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		if mini != nil {
			mini.Close()
		}
		return nil, nil, fmt.Errorf("benchq: redis ping: %w", err)
	}
	return rdb, mini, nil
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
