package store

import (
	"context"
	"errors"
	"slices"

	"github.com/redis/go-redis/v9"
)

// newScan plans the walk of a listing: the smallest of the indexes the
// filter names is walked, and the others checked entry by entry, so a
// page costs about as many job loads as it shows, however few of the
// owner's jobs match. The indexes of one owner's statuses and labels
// serve only filters naming the owner (every key's own listing), and
// only once they cover every stored job (backfill.go); until then, and
// for listings across owners, the narrowest old index is walked and the
// filter applied to each job loaded.
func (s *Store) newScan(ctx context.Context, f ListFilter, limit int, upper string) (*scan, error) {
	sc := &scan{s: s, f: f, limit: limit, upper: upper, filtered: f.Name != ""}
	indexed, err := s.indexed(ctx)
	if err != nil {
		return nil, err
	}
	if f.Owner == "" || !indexed {
		switch {
		case f.Owner != "":
			sc.index = ownerIndexKey(f.Owner)
		case f.Status != "":
			sc.index, sc.status = statusIndexKey(f.Status), f.Status
		default:
			sc.index = allIndexKey()
		}
		sc.filtered = sc.filtered || len(f.Labels) > 0 || f.Status != "" && sc.status == ""
		return sc, nil
	}
	var cands []string
	for k, v := range f.Labels {
		cands = append(cands, ownerLabelIndexKey(f.Owner, k, v))
	}
	slices.Sort(cands)
	switch {
	case f.Status != "":
		cands = append([]string{ownerStatusIndexKey(f.Owner, f.Status)}, cands...)
	case len(cands) == 0:
		// A label index holds only the owner's jobs: the owner's own
		// index is walked only when nothing narrower is named.
		cands = []string{ownerIndexKey(f.Owner)}
	}
	walk := 0
	if len(cands) > 1 {
		if walk, err = s.smallest(ctx, cands); err != nil {
			return nil, err
		}
	}
	sc.index = cands[walk]
	if walk == 0 && f.Status != "" {
		sc.status = f.Status
	}
	sc.checks = slices.Delete(cands, walk, walk+1)
	if f.Name != "" {
		sc.names, sc.filtered = ownerNamesKey(f.Owner), false
	}
	return sc, nil
}

// smallest returns the position of the index with the fewest entries.
func (s *Store) smallest(ctx context.Context, keys []string) (int, error) {
	cards := make([]*redis.IntCmd, len(keys))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cards[i] = p.ZCard(ctx, k)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	best := 0
	for i, c := range cards {
		if c.Val() < cards[best].Val() {
			best = i
		}
	}
	return best, nil
}

// indexVersion marks that the owner's status and label indexes hold
// every stored job.
const indexVersion = "2"

// indexed reports whether the owner's status and label indexes hold
// every job. Once they do they always will, so a true answer is kept.
func (s *Store) indexed(ctx context.Context) (bool, error) {
	if s.fullyIndexed.Load() {
		return true, nil
	}
	v, err := s.rdb.Get(ctx, indexVersionKey()).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok := v == indexVersion
	if ok {
		s.fullyIndexed.Store(true)
	}
	return ok, nil
}
