package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
)

// AddKey stores a new API key record and indexes it by hash. It fails with
// ErrConflict when the id or the hash is taken (with 256 random bits, only
// a bug can cause either).
func (s *Store) AddKey(ctx context.Context, k apikey.Key) error {
	if k.ID == "" || k.Hash == "" {
		return errors.New("store: add key: empty id or hash")
	}
	data, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("store: add key %s: encode: %w", k.ID, err)
	}
	rec, idx := apiKeyKey(k.ID), apiKeyHashKey(k.Hash)
	err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Exists(ctx, rec, idx).Result()
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrConflict
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, rec, data, 0)
			p.Set(ctx, idx, k.ID, 0)
			p.SAdd(ctx, apiKeysKey(), k.ID)
			if !k.Revoked() {
				p.SAdd(ctx, activeAPIKeysKey(), k.ID)
			}
			return nil
		})
		return err
	}, rec, idx)
	if errors.Is(err, redis.TxFailedErr) {
		err = ErrConflict
	}
	if err != nil {
		return fmt.Errorf("store: add key %s: %w", k.ID, err)
	}
	return nil
}

// KeyByHash returns the key whose plaintext hashes to hash, revoked or
// not (the caller tells them apart by RevokedAt). An unknown hash gives an
// error wrapping both ErrNotFound and apikey.ErrUnknown, so the store
// satisfies apikey.KeyFinder.
func (s *Store) KeyByHash(ctx context.Context, hash string) (apikey.Key, error) {
	id, err := s.rdb.Get(ctx, apiKeyHashKey(hash)).Result()
	if errors.Is(err, redis.Nil) {
		return apikey.Key{}, fmt.Errorf("store: api key: %w (%w)", ErrNotFound, apikey.ErrUnknown)
	}
	if err != nil {
		return apikey.Key{}, fmt.Errorf("store: api key by hash: %w", err)
	}
	k, err := s.key(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return apikey.Key{}, fmt.Errorf("%w (%w)", err, apikey.ErrUnknown)
	}
	return k, err
}

// KeyByID returns the key named id, revoked or not, or ErrNotFound: who
// owns a template that runs without a request (a CI hook, a schedule).
func (s *Store) KeyByID(ctx context.Context, id string) (apikey.Key, error) { return s.key(ctx, id) }

func (s *Store) key(ctx context.Context, id string) (apikey.Key, error) {
	data, err := s.rdb.Get(ctx, apiKeyKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return apikey.Key{}, fmt.Errorf("store: api key %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return apikey.Key{}, fmt.Errorf("store: api key %s: %w", id, err)
	}
	var k apikey.Key
	if err := json.Unmarshal(data, &k); err != nil {
		return apikey.Key{}, fmt.Errorf("store: api key %s: decode: %w", id, err)
	}
	return k, nil
}

// ListKeys returns every key, revoked ones included, oldest first.
func (s *Store) ListKeys(ctx context.Context) ([]apikey.Key, error) {
	ids, err := s.rdb.SMembers(ctx, apiKeysKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("store: list keys: %w", err)
	}
	keys := make([]apikey.Key, 0, len(ids))
	for _, id := range ids {
		k, err := s.key(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // listed but never written: an AddKey cut short
		}
		if err != nil {
			return nil, fmt.Errorf("store: list keys: %w", err)
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b apikey.Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return keys, nil
}

// RevokeKey marks key id revoked at now; requests with it get 401 from
// then on (within the API's key cache, at most a second). Revoking a
// revoked key keeps its first revocation time. Unknown ids give ErrNotFound.
func (s *Store) RevokeKey(ctx context.Context, id string, now time.Time) (apikey.Key, error) {
	var out apikey.Key
	rec := apiKeyKey(id)
	err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		k, err := s.key(ctx, id)
		if err != nil {
			return err
		}
		if k.Revoked() {
			out = k
			return nil
		}
		t := now.UTC()
		k.RevokedAt = &t
		data, err := json.Marshal(k)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, rec, data, 0)
			p.SRem(ctx, activeAPIKeysKey(), id)
			return nil
		})
		out = k
		return err
	}, rec)
	if errors.Is(err, redis.TxFailedErr) {
		err = fmt.Errorf("%w: key changed concurrently", ErrConflict)
	}
	if err != nil {
		return apikey.Key{}, fmt.Errorf("store: revoke key %s: %w", id, err)
	}
	return out, nil
}

// KeyCount is the number of keys ever created, revoked ones included: the
// API's open mode ends for good with the first key.
func (s *Store) KeyCount(ctx context.Context) (int64, error) {
	n, err := s.rdb.SCard(ctx, apiKeysKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("store: count keys: %w", err)
	}
	return n, nil
}

// ActiveKeyCount is the number of keys not revoked.
func (s *Store) ActiveKeyCount(ctx context.Context) (int64, error) {
	n, err := s.rdb.SCard(ctx, activeAPIKeysKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("store: count active keys: %w", err)
	}
	return n, nil
}
