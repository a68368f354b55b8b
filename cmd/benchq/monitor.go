package main

import (
	"net/http"

	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/api"
)

// sharedRedis hands asynqmon the service's own Redis client, so the
// monitor reads the queues through the connection (and deployment: single,
// sentinel or cluster) the service already uses.
type sharedRedis struct{ rdb redis.UniversalClient }

func (s sharedRedis) MakeRedisClient() any { return s.rdb }

// queueMonitor is asynqmon, read-only, rooted where the API mounts it.
func queueMonitor(rdb redis.UniversalClient) http.Handler {
	return asynqmon.New(asynqmon.Options{RootPath: api.MonitorPath, RedisConnOpt: sharedRedis{rdb}, ReadOnly: true})
}
