package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"
)

// TargetHost is the verification state of one host ("host:port") for one
// API key: the token it must publish and the outcome of the last check.
type TargetHost struct {
	Host      string    `json:"host"`
	Token     string    `json:"token"`
	CreatedAt time.Time `json:"created_at"`
	Verified  bool      `json:"verified"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Detail says why the last check failed, or what it found.
	Detail string `json:"detail,omitempty"`
}

// EnsureTargetHost returns owner's record for fresh.Host, storing fresh
// first if there is none. Every write renews the retention TTL of owner's
// records. Two concurrent calls agree on one token: the
// first write wins and both return it.
func (s *Store) EnsureTargetHost(ctx context.Context, owner string, fresh TargetHost) (TargetHost, error) {
	data, err := json.Marshal(fresh)
	if err != nil {
		return TargetHost{}, fmt.Errorf("store: target %s: encode: %w", fresh.Host, err)
	}
	key := targetHostsKey(owner)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, key, fresh.Host, data)
		p.Expire(ctx, key, s.retention)
		return nil
	})
	if err != nil {
		return TargetHost{}, fmt.Errorf("store: target %s: %w", fresh.Host, err)
	}
	return s.TargetHost(ctx, owner, fresh.Host)
}

// TargetHost returns owner's record for host, or ErrNotFound.
func (s *Store) TargetHost(ctx context.Context, owner, host string) (TargetHost, error) {
	raw, err := s.rdb.HGet(ctx, targetHostsKey(owner), host).Result()
	if errors.Is(err, redis.Nil) {
		return TargetHost{}, fmt.Errorf("store: target %s: %w", host, ErrNotFound)
	}
	if err != nil {
		return TargetHost{}, fmt.Errorf("store: target %s: %w", host, err)
	}
	var th TargetHost
	if err := json.Unmarshal([]byte(raw), &th); err != nil {
		return TargetHost{}, fmt.Errorf("store: target %s: decode: %w", host, err)
	}
	return th, nil
}

// SaveTargetCheck records the outcome of a check. The token is never
// changed: a record with a different token than the stored one is a
// conflict (the caller read a record that no longer exists).
func (s *Store) SaveTargetCheck(ctx context.Context, owner string, th TargetHost) error {
	data, err := json.Marshal(th)
	if err != nil {
		return fmt.Errorf("store: target %s: encode: %w", th.Host, err)
	}
	key := targetHostsKey(owner)
	err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		cur, err := tx.HGet(ctx, key, th.Host).Result()
		if errors.Is(err, redis.Nil) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		var stored TargetHost
		if err := json.Unmarshal([]byte(cur), &stored); err != nil || stored.Token != th.Token {
			return ErrConflict
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, th.Host, data)
			p.Expire(ctx, key, s.retention)
			return nil
		})
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		err = ErrConflict
	}
	if err != nil {
		return fmt.Errorf("store: save target check %s: %w", th.Host, err)
	}
	return nil
}

// TargetHosts lists owner's hosts, sorted by host.
func (s *Store) TargetHosts(ctx context.Context, owner string) ([]TargetHost, error) {
	all, err := s.rdb.HGetAll(ctx, targetHostsKey(owner)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: list targets: %w", err)
	}
	out := make([]TargetHost, 0, len(all))
	for host, raw := range all {
		var th TargetHost
		if err := json.Unmarshal([]byte(raw), &th); err != nil {
			return nil, fmt.Errorf("store: list targets: decode %s: %w", host, err)
		}
		out = append(out, th)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out, nil
}
