package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A sharded run is coordinated through a round: one try at the run by k
// worker processes. The coordinator (the attempt holding the job, shard 0)
// opens it by enqueueing the other shards' tasks; each shard joins it with
// a lease of its own, the coordinator sets the agreed start once all k
// joined, each shard stores its measurement, and anyone may abort it (the
// coordinator when the barrier waited too long or a shard died, a shard
// that cannot run). An aborted round takes no joins and no results, so a
// late shard never loads the target for a run that is over. A round's keys
// live for the TTL its writers give, a bound of the run, and the
// coordinator drops them once it stored the run.

// ErrRoundOver is returned to a shard that comes to a round that was
// aborted or that started without it.
var ErrRoundOver = errors.New("store: shard round over")

// ShardRound is what a round's keys say at one moment.
type ShardRound struct {
	Joined  map[int]string // shard -> worker that joined
	Start   time.Time      // the agreed start on Redis's clock; zero until set
	Abort   string         // why the round was given up; "" while it goes on
	Results map[int]bool   // shards whose measurement is stored
	Leased  map[int]bool   // shards whose lease is live
}

// joinShard registers a shard and takes its lease, unless the round is
// over: aborted, or started (every shard joined already).
// KEYS: state, joined, lease. ARGV: shard, worker, round ttl ms, lease ttl ms.
var joinShard = redis.NewScript(`
if redis.call("HEXISTS", KEYS[1], "abort") == 1 or redis.call("HEXISTS", KEYS[1], "start") == 1 then
  return -1
end
redis.call("HSET", KEYS[2], ARGV[1], ARGV[2])
redis.call("PEXPIRE", KEYS[2], ARGV[3])
redis.call("SET", KEYS[3], ARGV[2], "PX", ARGV[4])
return redis.call("HLEN", KEYS[2])`)

// startShards sets the start once, at Redis's TIME plus a margin, and
// returns it in µs; -1 when the round was aborted.
// KEYS: state. ARGV: margin µs, ttl ms.
var startShards = redis.NewScript(`
if redis.call("HEXISTS", KEYS[1], "abort") == 1 then
  return -1
end
local s = redis.call("HGET", KEYS[1], "start")
if s then
  return tonumber(s)
end
local t = redis.call("TIME")
local start = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[1])
redis.call("HSET", KEYS[1], "start", start)
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return start`)

// putShardResult stores a shard's measurement unless the round was
// aborted. KEYS: state, results. ARGV: shard, data, ttl ms.
var putShardResult = redis.NewScript(`
if redis.call("HEXISTS", KEYS[1], "abort") == 1 then
  return 0
end
redis.call("HSET", KEYS[2], ARGV[1], ARGV[2])
redis.call("PEXPIRE", KEYS[2], ARGV[3])
return 1`)

// JoinShard registers worker as shard of job id's round and takes the
// shard's lease for ttl; the round's keys live for roundTTL. It returns how
// many shards have joined, or ErrRoundOver.
func (s *Store) JoinShard(ctx context.Context, id, round string, shard int, worker string, ttl, roundTTL time.Duration) (int, error) {
	keys := []string{shardStateKey(id, round), shardJoinedKey(id, round), shardLeaseKey(id, round, shard)}
	n, err := joinShard.Run(ctx, s.rdb, keys, shard, worker, roundTTL.Milliseconds(), ttl.Milliseconds()).Int()
	if err != nil {
		return 0, fmt.Errorf("store: join shard %d of job %s round %s: %w", shard, id, round, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("store: shard %d of job %s round %s: %w", shard, id, round, ErrRoundOver)
	}
	return n, nil
}

// RenewShardLease extends holder's lease of the shard to ttl and reports
// whether holder still had it.
func (s *Store) RenewShardLease(ctx context.Context, id, round string, shard int, holder string, ttl time.Duration) (bool, error) {
	n, err := renewLease.Run(ctx, s.rdb, []string{shardLeaseKey(id, round, shard)}, holder, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("store: renew lease of shard %d of job %s: %w", shard, id, err)
	}
	return n == 1, nil
}

// ReleaseShardLease gives up holder's lease of the shard.
func (s *Store) ReleaseShardLease(ctx context.Context, id, round string, shard int, holder string) error {
	if err := releaseLease.Run(ctx, s.rdb, []string{shardLeaseKey(id, round, shard)}, holder).Err(); err != nil {
		return fmt.Errorf("store: release lease of shard %d of job %s: %w", shard, id, err)
	}
	return nil
}

// StartShards sets the round's start, once, to Redis's clock plus margin
// and returns it (every later call returns the same instant), or
// ErrRoundOver when the round was aborted.
func (s *Store) StartShards(ctx context.Context, id, round string, margin, roundTTL time.Duration) (time.Time, error) {
	us, err := startShards.Run(ctx, s.rdb, []string{shardStateKey(id, round)}, margin.Microseconds(), roundTTL.Milliseconds()).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("store: start shards of job %s round %s: %w", id, round, err)
	}
	if us < 0 {
		return time.Time{}, fmt.Errorf("store: start shards of job %s round %s: %w", id, round, ErrRoundOver)
	}
	return time.UnixMicro(us), nil
}

// AbortShards gives the round up with why, unless it was given up before;
// it reports whether this call did it.
func (s *Store) AbortShards(ctx context.Context, id, round, why string, roundTTL time.Duration) (bool, error) {
	var set *redis.BoolCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		set = p.HSetNX(ctx, shardStateKey(id, round), "abort", why)
		p.PExpire(ctx, shardStateKey(id, round), roundTTL)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: abort shards of job %s round %s: %w", id, round, err)
	}
	return set.Val(), nil
}

// PutShardResult stores a shard's encoded measurement, or returns
// ErrRoundOver when the round was aborted.
func (s *Store) PutShardResult(ctx context.Context, id, round string, shard int, data []byte, roundTTL time.Duration) error {
	keys := []string{shardStateKey(id, round), shardResultsKey(id, round)}
	n, err := putShardResult.Run(ctx, s.rdb, keys, shard, data, roundTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("store: result of shard %d of job %s round %s: %w", shard, id, round, err)
	}
	if n == 0 {
		return fmt.Errorf("store: result of shard %d of job %s round %s: %w", shard, id, round, ErrRoundOver)
	}
	return nil
}

// ShardRoundState reads a round of k shards in one round trip.
func (s *Store) ShardRoundState(ctx context.Context, id, round string, k int) (ShardRound, error) {
	var state, joined *redis.MapStringStringCmd
	var results *redis.StringSliceCmd
	leases := make([]*redis.IntCmd, k)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		state = p.HGetAll(ctx, shardStateKey(id, round))
		joined = p.HGetAll(ctx, shardJoinedKey(id, round))
		results = p.HKeys(ctx, shardResultsKey(id, round))
		for i := range leases {
			leases[i] = p.Exists(ctx, shardLeaseKey(id, round, i))
		}
		return nil
	})
	if err != nil {
		return ShardRound{}, fmt.Errorf("store: shard round %s of job %s: %w", round, id, err)
	}
	r := ShardRound{Joined: map[int]string{}, Results: map[int]bool{}, Leased: map[int]bool{}, Abort: state.Val()["abort"]}
	if v, ok := state.Val()["start"]; ok {
		us, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return ShardRound{}, fmt.Errorf("store: shard round %s of job %s: bad start %q", round, id, v)
		}
		r.Start = time.UnixMicro(us)
	}
	for f, w := range joined.Val() {
		if i, err := strconv.Atoi(f); err == nil {
			r.Joined[i] = w
		}
	}
	for _, f := range results.Val() {
		if i, err := strconv.Atoi(f); err == nil {
			r.Results[i] = true
		}
	}
	for i, c := range leases {
		r.Leased[i] = c.Val() == 1
	}
	return r, nil
}

// ShardResults returns the stored measurements of a round by shard.
func (s *Store) ShardResults(ctx context.Context, id, round string) (map[int][]byte, error) {
	all, err := s.rdb.HGetAll(ctx, shardResultsKey(id, round)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: shard results of job %s round %s: %w", id, round, err)
	}
	out := make(map[int][]byte, len(all))
	for f, v := range all {
		i, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("store: shard results of job %s round %s: bad field %q", id, round, f)
		}
		out[i] = []byte(v)
	}
	return out, nil
}

// DropShardRound deletes a round's keys once its run is stored or given
// up; the leases are left to their holders and their TTL.
func (s *Store) DropShardRound(ctx context.Context, id, round string) error {
	if err := s.rdb.Del(ctx, shardStateKey(id, round), shardJoinedKey(id, round), shardResultsKey(id, round)).Err(); err != nil {
		return fmt.Errorf("store: drop shard round %s of job %s: %w", round, id, err)
	}
	return nil
}

// RedisTime is Redis's clock, which the shards of a run agree on.
func (s *Store) RedisTime(ctx context.Context) (time.Time, error) {
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("store: redis time: %w", err)
	}
	return t, nil
}
