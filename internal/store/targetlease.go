package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A target lease says that a job is loading a host:port: an exclusive job
// takes one on each of its target hosts before it starts and its running
// attempt renews them with the job's own lease, so a dead worker's hosts
// come free when its job's lease would run out. The value is the job's
// ID, not the attempt's: every attempt of the job (a resume, a shard) may
// take or renew it.
//
// A job that finds a host taken waits in that host's queue, ordered by
// the job's creation time, and a free host goes only to the first of its
// queue: a job that keeps asking is never overtaken on a host by a later
// one. A job waits only in the queues of hosts it found blocked, so a
// host stays free for others while a job that also needs it waits for
// another host; once it found a host blocked it keeps its place there. A
// waiter that stopped asking (its task canceled, its worker dead, no
// worker free to run it) for longer than the staleness bound is dropped
// from the queue, so it cannot block the host; when it asks again it is
// put back where its creation time says.

// acquireTargets takes every host of KEYS (triples: lease, queue, seen)
// for job ARGV[1] or none. ARGV: job, lease TTL ms, queue score, staleness
// ms. A host is blocked when another job holds it or waits for it ahead
// of this one (a lower score); the job joins the queue of each host it is
// blocked on and keeps its place in the queues it joined before, so the
// queue of a host it can have now is not held up. It returns {} when the
// job holds every host now, else {i, job, kind} for the first blocked
// host: held ("held") by job, or free but job waits ahead ("ahead").
var acquireTargets = redis.NewScript(`
local n = #KEYS / 3
local job, ttl, order, stale = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local busy
local joined = {}
for i = 1, n do
  local lease, q, seen = KEYS[3*i-2], KEYS[3*i-1], KEYS[3*i]
  for _, m in ipairs(redis.call("ZRANGEBYSCORE", seen, "-inf", now - stale)) do
    redis.call("ZREM", q, m)
    redis.call("ZREM", seen, m)
  end
  joined[i] = redis.call("ZADD", q, "NX", order, job) == 1
  local holder = redis.call("GET", lease)
  local head = redis.call("ZRANGE", q, 0, 0)[1]
  local blocked
  if holder and holder ~= job then
    blocked = {i, holder, "held"}
  elseif not holder and head ~= job then
    blocked = {i, head, "ahead"}
  end
  if blocked then
    busy = busy or blocked
    joined[i] = false
  end
  if not joined[i] then -- it waits here, or did before
    redis.call("ZADD", seen, now, job)
    redis.call("PEXPIRE", q, stale)
    redis.call("PEXPIRE", seen, stale)
  end
end
if busy then
  for i = 1, n do
    if joined[i] then
      redis.call("ZREM", KEYS[3*i-1], job)
    end
  end
  return busy
end
for i = 1, n do
  redis.call("SET", KEYS[3*i-2], job, "PX", ttl)
  redis.call("ZREM", KEYS[3*i-1], job)
  redis.call("ZREM", KEYS[3*i], job)
end
return {}`)

// renewTargets extends job ARGV[1]'s lease on every host of KEYS to
// ARGV[2] ms and returns how many are held by another job. A lease that
// ran out is not taken again: the job's end may have just released it.
var renewTargets = redis.NewScript(`
local lost = 0
for i = 1, #KEYS do
  local holder = redis.call("GET", KEYS[i])
  if holder == ARGV[1] then
    redis.call("PEXPIRE", KEYS[i], ARGV[2])
  elseif holder then
    lost = lost + 1
  end
end
return lost`)

// releaseTargets gives up job ARGV[1]'s leases on the hosts of KEYS
// (triples as acquireTargets) and its places in their queues.
var releaseTargets = redis.NewScript(`
for i = 1, #KEYS / 3 do
  if redis.call("GET", KEYS[3*i-2]) == ARGV[1] then
    redis.call("DEL", KEYS[3*i-2])
  end
  redis.call("ZREM", KEYS[3*i-1], ARGV[1])
  redis.call("ZREM", KEYS[3*i], ARGV[1])
end
return 0`)

// TargetBusy says why AcquireTargets did not take a job's hosts.
type TargetBusy struct {
	Host string // the first host of the job's list that it cannot have
	Job  string // the job holding Host, or waiting for it ahead
	// Ahead: Host is free, but Job, created earlier, waits for it.
	Ahead bool
}

func (b *TargetBusy) String() string {
	if b.Ahead {
		return fmt.Sprintf("waiting for target %s: job %s, submitted earlier, waits for it too", b.Host, b.Job)
	}
	return fmt.Sprintf("waiting for target %s, held by job %s", b.Host, b.Job)
}

// minTargetStale keeps a zero staleness bound from dropping every waiter
// at once, the asking one included.
const minTargetStale = time.Second

// TargetWait says how a job waits for its hosts: Order is its place in
// their queues (its creation time), Stale how long a waiter may go
// without asking before it loses its place until it asks again.
type TargetWait struct {
	Order time.Time
	Stale time.Duration
}

// AcquireTargets takes, for job id, the lease on every host of hosts for
// ttl, all of them or none (one script). It returns nil when the job
// holds them all (a job holding some already keeps them), else which
// host it cannot have and why.
func (s *Store) AcquireTargets(ctx context.Context, id string, hosts []string, ttl time.Duration, w TargetWait) (*TargetBusy, error) {
	if len(hosts) == 0 {
		return nil, nil
	}
	res, err := acquireTargets.Run(ctx, s.rdb, targetTriples(hosts), id, ttl.Milliseconds(),
		max(w.Order.UnixMilli(), 0), max(w.Stale, minTargetStale).Milliseconds()).Slice()
	if err != nil {
		return nil, fmt.Errorf("store: acquire targets of job %s: %w", id, err)
	}
	if len(res) == 0 {
		return nil, nil
	}
	i, _ := res[0].(int64)
	holder, _ := res[1].(string)
	kind, _ := res[2].(string)
	if i < 1 || int(i) > len(hosts) {
		return nil, fmt.Errorf("store: acquire targets of job %s: script answered host %d of %d", id, i, len(hosts))
	}
	return &TargetBusy{Host: hosts[i-1], Job: holder, Ahead: kind == "ahead"}, nil
}

// RenewTargets extends job id's leases on hosts to ttl from now and
// reports whether no other job holds one of them: false means a lease ran
// out (Redis out of reach for a whole ttl) and another job took the host.
func (s *Store) RenewTargets(ctx context.Context, id string, hosts []string, ttl time.Duration) (bool, error) {
	if len(hosts) == 0 {
		return true, nil
	}
	keys := make([]string, len(hosts))
	for i, h := range hosts {
		keys[i] = targetLeaseKey(h)
	}
	lost, err := renewTargets.Run(ctx, s.rdb, keys, id, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("store: renew targets of job %s: %w", id, err)
	}
	return lost == 0, nil
}

// ReleaseTargets gives up job id's leases on hosts and its places in
// their queues; other jobs' leases are left alone.
func (s *Store) ReleaseTargets(ctx context.Context, id string, hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	if err := releaseTargets.Run(ctx, s.rdb, targetTriples(hosts), id).Err(); err != nil {
		return fmt.Errorf("store: release targets of job %s: %w", id, err)
	}
	return nil
}

// TargetHolder returns the ID of the job holding host, or "" when none.
func (s *Store) TargetHolder(ctx context.Context, host string) (string, error) {
	id, err := s.rdb.Get(ctx, targetLeaseKey(host)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: holder of target %s: %w", host, err)
	}
	return id, nil
}

func targetTriples(hosts []string) []string {
	keys := make([]string, 0, 3*len(hosts))
	for _, h := range hosts {
		keys = append(keys, targetLeaseKey(h), targetQueueKey(h), targetSeenKey(h))
	}
	return keys
}
