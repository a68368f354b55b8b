package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A target lease says that a job is loading a host:port. Every job takes
// one on each of its target hosts before it starts, and its running
// attempt renews them with the job's own lease, so a dead worker's hosts
// come free when its job's lease would run out. An exclusive job's lease
// is the host's alone: it waits while any other job holds the host. A
// job that opted out takes a shared lease, which any number of such jobs
// hold at once, but not while an exclusive job holds the host: an
// exclusive job's numbers are never another load's. The lease is the
// job's, not the attempt's: every attempt of the job (a resume, a shard)
// may take or renew it.
//
// A job that finds a host blocked waits in that host's queue, ordered by
// the job's creation time, and a host goes only to a job with nobody
// ahead of it in that queue: a job that keeps asking is never overtaken
// on a host by a later one, and a stream of shared jobs cannot starve an
// exclusive one. A job waits only in the queues of hosts it found
// blocked, so a host stays free for others while a job that also needs it
// waits for another host; once it found a host blocked it keeps its place
// there. A waiter that stopped asking (its task canceled, its worker
// dead, no worker free to run it) for longer than the staleness bound is
// dropped from the queue, so it cannot block the host; when it asks again
// it is put back where its creation time says.

// acquireTargets takes every host of KEYS (quadruples: lease, shared,
// queue, seen) for job ARGV[1] or none. ARGV: job, lease TTL ms, queue
// score, staleness ms, "1" for a shared lease. A host is blocked when
// another job holds it exclusively, when another holds it at all and this
// job wants it exclusively, or when another job waits for it ahead of
// this one (a lower score); the job joins the queue of each host it is
// blocked on and keeps its place in the queues it joined before. It
// returns {} when the job holds every host now, else {i, job, kind} for
// the first blocked host: held ("held") by job, or waited for ahead
// ("ahead") by job.
var acquireTargets = redis.NewScript(`
local n = #KEYS / 4
local job, ttl, order, stale = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local shared = ARGV[5] == "1"
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local busy
local joined = {}
for i = 1, n do
  local lease, readers, q, seen = KEYS[4*i-3], KEYS[4*i-2], KEYS[4*i-1], KEYS[4*i]
  for _, m in ipairs(redis.call("ZRANGEBYSCORE", seen, "-inf", now - stale)) do
    redis.call("ZREM", q, m)
    redis.call("ZREM", seen, m)
  end
  redis.call("ZREMRANGEBYSCORE", readers, "-inf", now)
  joined[i] = redis.call("ZADD", q, "NX", order, job) == 1
  local holder = redis.call("GET", lease)
  local blocked
  if holder and holder ~= job then
    blocked = {i, holder, "held"}
  end
  if not blocked and not shared then
    for _, m in ipairs(redis.call("ZRANGE", readers, 0, 1)) do
      if m ~= job then
        blocked = {i, m, "held"}
        break
      end
    end
  end
  if not blocked then
    local head = redis.call("ZRANGE", q, 0, 0)[1]
    if head ~= job then
      blocked = {i, head, "ahead"}
    end
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
      redis.call("ZREM", KEYS[4*i-1], job)
    end
  end
  return busy
end
for i = 1, n do
  if shared then
    redis.call("ZADD", KEYS[4*i-2], now + ttl, job)
    redis.call("PEXPIRE", KEYS[4*i-2], ttl)
  else
    redis.call("SET", KEYS[4*i-3], job, "PX", ttl)
  end
  redis.call("ZREM", KEYS[4*i-1], job)
  redis.call("ZREM", KEYS[4*i], job)
end
return {}`)

// renewTargets extends job ARGV[1]'s leases (KEYS in pairs: lease,
// shared) to ARGV[2] ms from now and returns on how many hosts another
// job holds an exclusive lease. A lease that ran out is not taken again:
// the job's end may have just released it.
var renewTargets = redis.NewScript(`
local job, ttl = ARGV[1], tonumber(ARGV[2])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lost = 0
for i = 1, #KEYS / 2 do
  local lease, readers = KEYS[2*i-1], KEYS[2*i]
  local holder = redis.call("GET", lease)
  if holder == job then
    redis.call("PEXPIRE", lease, ttl)
  elseif holder then
    lost = lost + 1
  end
  if redis.call("ZADD", readers, "XX", "CH", now + ttl, job) == 1 then
    redis.call("PEXPIRE", readers, ttl)
  end
end
return lost`)

// releaseTargets gives up job ARGV[1]'s leases on the hosts of KEYS
// (quadruples as acquireTargets) and its places in their queues.
var releaseTargets = redis.NewScript(`
for i = 1, #KEYS / 4 do
  if redis.call("GET", KEYS[4*i-3]) == ARGV[1] then
    redis.call("DEL", KEYS[4*i-3])
  end
  redis.call("ZREM", KEYS[4*i-2], ARGV[1])
  redis.call("ZREM", KEYS[4*i-1], ARGV[1])
  redis.call("ZREM", KEYS[4*i], ARGV[1])
end
return 0`)

// TargetBusy says why AcquireTargets did not take a job's hosts.
type TargetBusy struct {
	Host string // the first host of the job's list that it cannot have
	Job  string // a job holding Host, or waiting for it ahead
	// Ahead: no job in the way holds Host, but Job, created earlier,
	// waits for it.
	Ahead bool
}

func (b *TargetBusy) String() string {
	if b.Ahead {
		return fmt.Sprintf("waiting for target %s: job %s, submitted earlier, waits for it too", b.Host, b.Job)
	}
	return fmt.Sprintf("waiting for target %s, held by job %s", b.Host, b.Job)
}

// TargetWait says how a job takes and waits for its hosts: Shared takes
// a lease other shared jobs may hold too; Order is its place in the
// hosts' queues (its creation time); Stale how long a waiter may go
// without asking before it loses its place until it asks again.
type TargetWait struct {
	Shared bool
	Order  time.Time
	Stale  time.Duration
}

// minTargetStale keeps a zero staleness bound from dropping every waiter
// at once, the asking one included.
const minTargetStale = time.Second

// AcquireTargets takes, for job id, the lease on every host of hosts for
// ttl, all of them or none (one script). It returns nil when the job
// holds them all (a job holding some already keeps them), else which
// host it cannot have and why.
func (s *Store) AcquireTargets(ctx context.Context, id string, hosts []string, ttl time.Duration, w TargetWait) (*TargetBusy, error) {
	if len(hosts) == 0 {
		return nil, nil
	}
	shared := "0"
	if w.Shared {
		shared = "1"
	}
	res, err := acquireTargets.Run(ctx, s.rdb, targetKeys(hosts, true), id, ttl.Milliseconds(),
		max(w.Order.UnixMilli(), 0), max(w.Stale, minTargetStale).Milliseconds(), shared).Slice()
	if err != nil {
		return nil, fmt.Errorf("store: acquire targets of job %s: %w", id, err)
	}
	if len(res) == 0 {
		return nil, nil
	}
	if len(res) != 3 {
		return nil, fmt.Errorf("store: acquire targets of job %s: script answered %v", id, res)
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
// reports whether no other job holds one of them exclusively: false means
// a lease ran out (Redis out of reach for a whole ttl) and an exclusive
// job took the host.
func (s *Store) RenewTargets(ctx context.Context, id string, hosts []string, ttl time.Duration) (bool, error) {
	if len(hosts) == 0 {
		return true, nil
	}
	lost, err := renewTargets.Run(ctx, s.rdb, targetKeys(hosts, false), id, ttl.Milliseconds()).Int()
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
	if err := releaseTargets.Run(ctx, s.rdb, targetKeys(hosts, true), id).Err(); err != nil {
		return fmt.Errorf("store: release targets of job %s: %w", id, err)
	}
	return nil
}

// TargetHolders returns the ID of the job holding host exclusively ("" if
// none) and those of the jobs sharing it.
func (s *Store) TargetHolders(ctx context.Context, host string) (string, []string, error) {
	id, err := s.rdb.Get(ctx, targetLeaseKey(host)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", nil, fmt.Errorf("store: holder of target %s: %w", host, err)
	}
	now, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return "", nil, fmt.Errorf("store: holders of target %s: %w", host, err)
	}
	shared, err := s.rdb.ZRangeByScore(ctx, targetSharedKey(host), &redis.ZRangeBy{
		Min: fmt.Sprint(now.UnixMilli() + 1), Max: "+inf",
	}).Result()
	if err != nil {
		return "", nil, fmt.Errorf("store: holders of target %s: %w", host, err)
	}
	return id, shared, nil
}

// targetKeys lists each host's lease, shared and, with queues, queue and
// seen keys, in the order the scripts read them.
func targetKeys(hosts []string, queues bool) []string {
	keys := make([]string, 0, 4*len(hosts))
	for _, h := range hosts {
		keys = append(keys, targetLeaseKey(h), targetSharedKey(h))
		if queues {
			keys = append(keys, targetQueueKey(h), targetSeenKey(h))
		}
	}
	return keys
}
