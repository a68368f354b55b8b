package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// watchHealthCheck is how often the notice subscription pings Redis when
// no notice came: a connection that died silently (a failover, a
// dropped NAT entry) is noticed and replaced within it.
const watchHealthCheck = 3 * time.Second

// watchBuffer is how many notices wait between the subscription and the
// caller's onEvent; go-redis drops a notice only after the buffer stayed
// full for a minute.
const watchBuffer = 1024

// errWatchClosed: the subscription closed while its context was still
// live, which go-redis does only when the client itself was closed.
var errWatchClosed = errors.New("store: watch events: subscription closed")

// WatchEvents follows the notices AppendEvent publishes, on one pub/sub
// connection of its own rather than one of the pool's, until ctx ends.
// It calls onEvent with the id of each job that got an event, and
// onResync each time the subscription is (re)established: notices
// published while it was down are lost, so the caller must then look at
// every job it follows. Both are called from one goroutine and must not
// block. Notices are only hints (at most once, possibly late); the events
// themselves are read with ReadEvents.
//
// It works alike on one Redis, Sentinel (the subscription follows the
// master) and Cluster (a PUBLISH reaches subscribers on every node).
func (s *Store) WatchEvents(ctx context.Context, onEvent func(jobID string), onResync func()) error {
	ps := s.rdb.Subscribe(ctx, eventsChannel())
	defer ps.Close()
	ch := ps.ChannelWithSubscriptions(
		redis.WithChannelHealthCheckInterval(watchHealthCheck),
		redis.WithChannelSize(watchBuffer),
	)
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return errWatchClosed
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					onResync()
				}
			case *redis.Message:
				onEvent(m.Payload)
			}
		}
	}
}

// ActiveKeys reports which of the API keys ids are live (not revoked);
// an id it never stored counts as not live. One round trip whatever the
// number of ids, so a process can re-check the keys of all its open
// event streams every fraction of a second.
func (s *Store) ActiveKeys(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	live, err := s.rdb.SMIsMember(ctx, activeAPIKeysKey(), members...).Result()
	if err != nil {
		return nil, fmt.Errorf("store: active keys: %w", err)
	}
	for i, id := range ids {
		out[id] = live[i]
	}
	return out, nil
}
