package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// Page sizes of ListJobs.
const (
	DefaultListLimit = 20
	MaxListLimit     = 1000
	// maxScan bounds the index entries one ListJobs reads when filters
	// reject most of them; the page may then be short, with a cursor to
	// go on from.
	maxScan = 5000
)

// ListFilter selects and pages jobs. Zero fields select everything.
type ListFilter struct {
	Owner  string            // only this API key's jobs; "" means every owner
	Status job.Status        // only jobs in this status
	Labels map[string]string // only jobs carrying every one of these labels
	// Name keeps jobs whose name contains it, ignoring case: people
	// remember part of a name, rarely all of it.
	Name   string
	Cursor string // the next value of the previous page; "" starts at the newest
	Limit  int    // page size; zero means DefaultListLimit, capped at MaxListLimit
}

// ListJobs returns jobs newest first, and the cursor of the next page (""
// after the last). Pages stay consistent while jobs are created: a cursor
// marks a place in creation order, and new jobs land before the first page.
func (s *Store) ListJobs(ctx context.Context, f ListFilter) (jobs []*job.Job, next string, err error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	upper := "+"
	if f.Cursor != "" {
		m, ok := decodeCursor(f.Cursor)
		if !ok {
			return nil, "", fmt.Errorf("store: list jobs: %w", ErrInvalidCursor)
		}
		upper = "(" + m
	}
	sc := &scan{s: s, f: f, index: f.index(), limit: limit, upper: upper}
	if err := sc.run(ctx); err != nil {
		return nil, "", fmt.Errorf("store: list jobs: %w", err)
	}
	if sc.done {
		return sc.jobs, "", nil
	}
	return sc.jobs, encodeCursor(sc.last), nil
}

// index picks the index to walk: the narrowest the filter names.
func (f ListFilter) index() string {
	switch {
	case f.Owner != "":
		return ownerIndexKey(f.Owner)
	case f.Status != "":
		return statusIndexKey(f.Status)
	default:
		return allIndexKey()
	}
}

func (f ListFilter) match(j *job.Job) bool {
	if f.Owner != "" && j.Owner != f.Owner || f.Status != "" && j.Status != f.Status {
		return false
	}
	if f.Name != "" && !strings.Contains(strings.ToLower(j.Spec.Name), strings.ToLower(f.Name)) {
		return false
	}
	for k, v := range f.Labels {
		if got, ok := j.Spec.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// scan walks one index downwards from upper, collecting matching jobs.
type scan struct {
	s       *Store
	f       ListFilter
	index   string
	limit   int
	upper   string // exclusive ZREVRANGEBYLEX bound of the next batch
	jobs    []*job.Job
	last    string // last member looked at
	scanned int
	done    bool     // the index has no entries past last
	gone    []string // entries of jobs that do not exist
	strays  []string // entries of this index that their job disagrees with for good
}

func (sc *scan) run(ctx context.Context) error {
	for len(sc.jobs) < sc.limit && sc.scanned < maxScan && !sc.done {
		batch := int64(sc.limit - len(sc.jobs))
		if sc.f.Status != "" || len(sc.f.Labels) > 0 {
			batch = max(batch, 100) // filters reject entries: read ahead
		}
		members, err := sc.s.rdb.ZRevRangeByLex(ctx, sc.index, &redis.ZRangeBy{
			Max: sc.upper, Min: "-", Count: batch,
		}).Result()
		if err != nil {
			return err
		}
		taken, err := sc.take(ctx, members)
		if err != nil {
			return err
		}
		// A short batch means the index ends here, unless the page filled
		// before its end.
		sc.done = int64(len(members)) < batch && taken == len(members)
	}
	return sc.forget(ctx)
}

// take loads the jobs of members and keeps those that match, stopping
// when the page is full; it returns how many members it looked at.
func (sc *scan) take(ctx context.Context, members []string) (int, error) {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = memberID(m)
	}
	jobs, err := sc.s.loadJobs(ctx, sc.s.rdb, ids)
	if err != nil {
		return 0, err
	}
	for i, m := range members {
		sc.last, sc.upper = m, "("+m
		sc.scanned++
		switch sc.s.classify(m, jobs[i], sc.status()) {
		case entryGone:
			sc.gone = append(sc.gone, m)
		case entryStray:
			sc.strays = append(sc.strays, m)
		case entryLive:
			if sc.f.match(jobs[i]) {
				sc.jobs = append(sc.jobs, jobs[i])
			}
		}
		if len(sc.jobs) == sc.limit {
			return i + 1, nil
		}
	}
	return len(members), nil
}

// status is the status whose index the scan walks; "" for the all and
// owner indexes.
func (sc *scan) status() job.Status {
	if sc.index == statusIndexKey(sc.f.Status) {
		return sc.f.Status
	}
	return ""
}

// forget removes entries of missing jobs from every index they can be in
// (the owner is gone with the job, so only the walked owner index is
// known), and stray entries from the walked index.
func (sc *scan) forget(ctx context.Context) error {
	if len(sc.gone) == 0 && len(sc.strays) == 0 {
		return nil
	}
	gone := make([]any, len(sc.gone))
	for i, m := range sc.gone {
		gone[i] = m
	}
	strays := make([]any, len(sc.strays))
	for i, m := range sc.strays {
		strays[i] = m
	}
	_, err := sc.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if len(strays) > 0 {
			p.ZRem(ctx, sc.index, strays...)
		}
		if len(gone) == 0 {
			return nil
		}
		p.ZRem(ctx, sc.index, gone...)
		p.ZRem(ctx, allIndexKey(), gone...)
		for _, st := range statuses() {
			p.ZRem(ctx, statusIndexKey(st), gone...)
		}
		return nil
	})
	return err
}

// CountByStatus counts the jobs created within the retention period in
// each status, for metrics. Every status is present in the map.
func (s *Store) CountByStatus(ctx context.Context) (map[job.Status]int64, error) {
	from := "[" + timePrefix(s.now().Add(-s.retention))
	cmds := make(map[job.Status]*redis.IntCmd)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, st := range statuses() {
			cmds[st] = p.ZLexCount(ctx, statusIndexKey(st), from, "+")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: count jobs by status: %w", err)
	}
	counts := make(map[job.Status]int64, len(cmds))
	for st, c := range cmds {
		counts[st] = c.Val()
	}
	return counts, nil
}

// Cursors are index members, opaque to clients.
func encodeCursor(member string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(member))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !validMember(string(b)) {
		return "", false
	}
	return string(b), true
}
