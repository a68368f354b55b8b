package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// MaxChangePoints bounds the change points kept per owner and template:
// past it the oldest found go first, so a template's record stays a few
// hundred kilobytes at most.
const MaxChangePoints = 200

// storedChangePoint is a change point as kept: the owner whose template's
// history it is in, and whether a job's end announced it (its webhook
// event fires once).
type storedChangePoint struct {
	job.ChangePoint
	Owner     string `json:"owner"`
	Announced bool   `json:"announced,omitempty"`
}

// RecordChangePoints keeps the change points found in owner's template's
// history and returns them as kept, with their IDs and acknowledgements,
// in found's order. A point in the same series as a kept one whose job is
// among the found point's Near jobs is that kept point: it keeps its ID,
// detection time and acknowledgement and takes the found job, means and
// p-value (more history places a shift better). announce marks the
// points announced; the second list is the ones no earlier record had
// announced, whose event is to be sent now. Two records at once (two jobs
// of a template ending together) are serialised, so each point is
// announced once.
func (s *Store) RecordChangePoints(ctx context.Context, owner, template string, found []job.ChangePoint, announce bool) (kept, fresh []job.ChangePoint, err error) {
	if len(found) == 0 {
		return nil, nil, nil
	}
	key := changePointsKey(owner, template)
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		var ids []string
		err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			var err error
			kept, fresh, ids, err = s.recordOnce(ctx, tx, key, owner, found, announce)
			return err
		}, key)
		switch {
		case err == nil:
			s.indexChangePoints(ctx, key, ids)
			return kept, fresh, nil
		case errors.Is(err, redis.TxFailedErr):
			if err := sleepJitter(ctx, attempt); err != nil {
				return nil, nil, fmt.Errorf("store: record change points of %s: %w", template, err)
			}
		default:
			return nil, nil, fmt.Errorf("store: record change points of %s: %w", template, err)
		}
	}
	return nil, nil, fmt.Errorf("store: record change points of %s: %w: still contended after %d attempts", template, ErrConflict, maxTxAttempts)
}

// recordOnce is one optimistic round of RecordChangePoints under WATCH; it
// also returns the IDs it created.
func (s *Store) recordOnce(ctx context.Context, tx *redis.Tx, key, owner string, found []job.ChangePoint, announce bool) (kept, fresh []job.ChangePoint, created []string, err error) {
	all, err := loadChangePoints(ctx, tx, key)
	if err != nil {
		return nil, nil, nil, err
	}
	changed := map[string]*storedChangePoint{}
	for _, f := range found {
		sp := matchChangePoint(all, f)
		if sp == nil {
			sp = &storedChangePoint{ChangePoint: f, Owner: owner}
			sp.ID, sp.Near = job.NewChangePointID(), nil
			all = append(all, sp)
			created = append(created, sp.ID)
		} else {
			sp.JobID, sp.Commit, sp.Before, sp.After, sp.Magnitude, sp.PValue = f.JobID, f.Commit, f.Before, f.After, f.Magnitude, f.PValue
		}
		if announce && !sp.Announced {
			sp.Announced = true
			fresh = append(fresh, sp.ChangePoint)
		}
		changed[sp.ID] = sp
		kept = append(kept, sp.ChangePoint)
	}
	// The oldest found go first past the bound; those just found stay.
	slices.SortStableFunc(all, func(a, b *storedChangePoint) int { return a.DetectedAt.Compare(b.DetectedAt) })
	var drop []string
	for len(all) > MaxChangePoints && changed[all[0].ID] == nil {
		drop = append(drop, all[0].ID)
		all = all[1:]
	}
	values := make([]any, 0, 2*len(changed))
	for id, sp := range changed {
		data, err := json.Marshal(sp)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("encode change point %s: %w", id, err)
		}
		values = append(values, id, data)
	}
	_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, values...)
		if len(drop) > 0 {
			p.HDel(ctx, key, drop...)
		}
		p.PExpire(ctx, key, s.retention)
		return nil
	})
	return kept, fresh, created, err
}

// matchChangePoint finds the kept point f is: same series, its job among
// f's Near jobs (or f's own).
func matchChangePoint(all []*storedChangePoint, f job.ChangePoint) *storedChangePoint {
	for _, sp := range all {
		if sp.Series == f.Series && (sp.JobID == f.JobID || slices.Contains(f.Near, sp.JobID)) {
			return sp
		}
	}
	return nil
}

// indexChangePoints points each new ID at its template's record, for the
// acknowledge endpoint, which has the ID only. The record is written
// already; a lost index write leaves that one point answering 404 to
// its acknowledgement, which is not worth failing the record for.
func (s *Store) indexChangePoints(ctx context.Context, key string, ids []string) {
	if len(ids) == 0 {
		return
	}
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.Set(ctx, changePointIDKey(id), key, s.retention)
		}
		return nil
	})
}

// hashReader is a client or a transaction.
type hashReader interface {
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
}

// loadChangePoints reads every change point kept under key.
func loadChangePoints(ctx context.Context, c hashReader, key string) ([]*storedChangePoint, error) {
	raw, err := c.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	out := make([]*storedChangePoint, 0, len(raw))
	for id, v := range raw {
		var sp storedChangePoint
		if err := json.Unmarshal([]byte(v), &sp); err != nil {
			return nil, fmt.Errorf("decode change point %s: %w", id, err)
		}
		out = append(out, &sp)
	}
	return out, nil
}

// ChangePoints lists the change points kept for owner's template, oldest
// found first.
func (s *Store) ChangePoints(ctx context.Context, owner, template string) ([]job.ChangePoint, error) {
	all, err := loadChangePoints(ctx, s.rdb, changePointsKey(owner, template))
	if err != nil {
		return nil, fmt.Errorf("store: change points of %s: %w", template, err)
	}
	slices.SortStableFunc(all, func(a, b *storedChangePoint) int {
		return cmp.Or(a.DetectedAt.Compare(b.DetectedAt), strings.Compare(a.ID, b.ID))
	})
	out := make([]job.ChangePoint, len(all))
	for i, sp := range all {
		out[i] = sp.ChangePoint
	}
	return out, nil
}

// AcknowledgeChangePoint marks change point id acknowledged by who at at,
// if allowed says its owner's points may be acknowledged by the caller;
// ErrNotFound when there is no such point or the caller may not see it,
// alike, so IDs cannot be probed across owners. A point acknowledged
// before keeps its first acknowledgement.
func (s *Store) AcknowledgeChangePoint(ctx context.Context, id, who string, at time.Time, allowed func(owner string) bool) (job.ChangePoint, error) {
	key, err := s.rdb.Get(ctx, changePointIDKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return job.ChangePoint{}, fmt.Errorf("store: change point %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return job.ChangePoint{}, fmt.Errorf("store: change point %s: %w", id, err)
	}
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		var out job.ChangePoint
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			raw, err := tx.HGet(ctx, key, id).Result()
			if errors.Is(err, redis.Nil) {
				return ErrNotFound
			}
			if err != nil {
				return err
			}
			var sp storedChangePoint
			if err := json.Unmarshal([]byte(raw), &sp); err != nil {
				return fmt.Errorf("decode: %w", err)
			}
			if !allowed(sp.Owner) {
				return ErrNotFound
			}
			if !sp.Acknowledged {
				t := at.UTC()
				sp.Acknowledged, sp.AcknowledgedBy, sp.AcknowledgedAt = true, who, &t
			}
			out = sp.ChangePoint
			data, err := json.Marshal(sp)
			if err != nil {
				return fmt.Errorf("encode: %w", err)
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, key, id, data)
				return nil
			})
			return err
		}, key)
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, redis.TxFailedErr):
			if err := sleepJitter(ctx, attempt); err != nil {
				return job.ChangePoint{}, fmt.Errorf("store: acknowledge change point %s: %w", id, err)
			}
		default:
			return job.ChangePoint{}, fmt.Errorf("store: acknowledge change point %s: %w", id, err)
		}
	}
	return job.ChangePoint{}, fmt.Errorf("store: acknowledge change point %s: %w: still contended after %d attempts", id, ErrConflict, maxTxAttempts)
}
