package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Before keys carried hash tags (keys.go), a job's keys were
// "benchq:job:<id>[:...]", the indexes "benchq:jobs[:...]", an API key
// "benchq:apikey:<id>" and the key indexes "benchq:apikeys[:...]". The
// all-in-one keeps its Redis in an append-only file across upgrades, so
// MigrateKeys renames what it finds of that layout once.

// layoutKey records that the keys follow the tagged layout, so later
// starts skip the scan.
func layoutKey() string { return prefix + "layout" }

const taggedLayout = "tagged"

// migrateScan is the SCAN batch of MigrateKeys.
const migrateScan = 1000

// MigrateKeys renames keys of the layout before hash tags to their tagged
// names and returns how many it renamed. Every process calls it before it
// serves: once a run completed it records so and later calls only read
// that mark; a run cut short is finished by the next. A tagged name that
// exists already is kept and the old key left alone. A Redis Cluster is
// skipped: RENAME cannot cross slots there, and the old layout's
// transactions never worked on one, so it holds no such data.
func (s *Store) MigrateKeys(ctx context.Context) (int, error) {
	if _, ok := s.rdb.(*redis.ClusterClient); ok {
		return 0, nil
	}
	mark, err := s.rdb.Get(ctx, layoutKey()).Result()
	switch {
	case err == nil && mark == taggedLayout:
		return 0, nil
	case err != nil && !errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("store: migrate keys: %w", err)
	}
	renamed := 0
	iter := s.rdb.Scan(ctx, 0, prefix+"*", migrateScan).Iterator()
	for iter.Next(ctx) {
		old := iter.Val()
		to, ok := taggedName(old)
		if !ok {
			continue
		}
		done, err := s.rdb.RenameNX(ctx, old, to).Result()
		switch {
		case err != nil && strings.Contains(err.Error(), "no such key"):
			// Expired, or renamed by another process migrating too.
		case err != nil:
			return renamed, fmt.Errorf("store: migrate key %s: %w", old, err)
		case done:
			renamed++
		}
	}
	if err := iter.Err(); err != nil {
		return renamed, fmt.Errorf("store: migrate keys: scan: %w", err)
	}
	if err := s.rdb.Set(ctx, layoutKey(), taggedLayout, 0).Err(); err != nil {
		return renamed, fmt.Errorf("store: migrate keys: mark done: %w", err)
	}
	return renamed, nil
}

// taggedName maps a key of the layout before hash tags to its tagged
// name; ok is false for a key that is not of that layout.
func taggedName(old string) (string, bool) {
	rest, ok := strings.CutPrefix(old, prefix)
	if !ok || strings.Contains(rest, "{") {
		return "", false
	}
	switch {
	case strings.HasPrefix(rest, "job:"):
		id, suffix, _ := strings.Cut(strings.TrimPrefix(rest, "job:"), ":")
		if id == "" {
			return "", false
		}
		if suffix != "" {
			suffix = ":" + suffix
		}
		return jobKey(id) + suffix, true
	case rest == "jobs" || strings.HasPrefix(rest, "jobs:"):
		return allIndexKey() + strings.TrimPrefix(rest, "jobs"), true
	case strings.HasPrefix(rest, "apikey:"):
		return apiKeyKey(strings.TrimPrefix(rest, "apikey:")), true
	case rest == "apikeys" || strings.HasPrefix(rest, "apikeys:"):
		return apiKeysKey() + strings.TrimPrefix(rest, "apikeys"), true
	}
	return "", false
}
