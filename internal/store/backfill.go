package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// backfillBatch is how many jobs one round of BackfillIndexes reads.
const backfillBatch = 1000

// BackfillIndexes puts every stored job in its owner's status, label and
// name indexes, which jobs stored before those indexes existed lack, then
// marks them complete, so listings use them (listplan.go); until then
// listings walk the owner's index as before. It returns how many jobs it
// indexed. Every process may call it at start: once a run completed,
// later calls only read the mark, and a run cut short is redone by the
// next. Jobs created or changed meanwhile are indexed by their writers;
// an entry this run adds for a status the job has just left is one a
// listing passes over, as a writer cut short leaves (index.go).
func (s *Store) BackfillIndexes(ctx context.Context) (int, error) {
	if ok, err := s.indexed(ctx); err != nil || ok {
		if err != nil {
			return 0, fmt.Errorf("store: backfill indexes: %w", err)
		}
		return 0, nil
	}
	upper, n := "+", 0
	for {
		members, err := s.rdb.ZRevRangeByLex(ctx, allIndexKey(), &redis.ZRangeBy{Max: upper, Min: "-", Count: backfillBatch}).Result()
		if err != nil {
			return n, fmt.Errorf("store: backfill indexes: %w", err)
		}
		done, err := s.backfillBatch(ctx, members)
		n += done
		if err != nil {
			return n, fmt.Errorf("store: backfill indexes: %w", err)
		}
		if len(members) < backfillBatch {
			break
		}
		upper = "(" + members[len(members)-1]
	}
	if err := s.rdb.Set(ctx, indexVersionKey(), indexVersion, 0).Err(); err != nil {
		return n, fmt.Errorf("store: backfill indexes: mark done: %w", err)
	}
	s.fullyIndexed.Store(true)
	return n, nil
}

// backfillBatch indexes the jobs of members that exist, under the member
// their index entry has.
func (s *Store) backfillBatch(ctx context.Context, members []string) (int, error) {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = memberID(m)
	}
	jobs, err := s.loadJobs(ctx, s.rdb, ids)
	if err != nil {
		return 0, err
	}
	n := 0
	touched := map[string]bool{}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, j := range jobs {
			if j == nil || indexMember(j) != members[i] {
				continue // gone, or a stray entry: listings drop those
			}
			n++
			keys := append(labelIndexKeys(j), ownerStatusIndexKey(j.Owner, j.Status))
			for _, k := range keys {
				p.ZAdd(ctx, k, redis.Z{Member: members[i]})
				touched[k] = true
			}
			p.HSet(ctx, ownerNamesKey(j.Owner), members[i], listedName(j))
			touched[ownerNamesKey(j.Owner)] = true
		}
		// The indexes outlive their jobs, as touchIndexes keeps them.
		keys := []string{keptIndexKey()}
		for k := range touched {
			keys = append(keys, k)
		}
		if len(keys) > 1 {
			touchScript.Eval(ctx, p, keys, s.retention.Milliseconds())
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
