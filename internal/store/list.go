package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
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
	// maxIndexScan bounds the index entries one ListJobs reads when
	// index checks reject most of them (checks cost no job load).
	maxIndexScan = 20_000
	// checkBatch is how many entries a checked walk reads at once.
	checkBatch = 1000
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
	sc, err := s.newScan(ctx, f, limit, upper)
	if err != nil {
		return nil, "", fmt.Errorf("store: list jobs: %w", err)
	}
	if err := sc.run(ctx); err != nil {
		return nil, "", fmt.Errorf("store: list jobs: %w", err)
	}
	if sc.done {
		return sc.jobs, "", nil
	}
	return sc.jobs, encodeCursor(sc.last), nil
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
// Entries missing from any of the checked indexes are passed over
// without loading their job.
type scan struct {
	s      *Store
	f      ListFilter
	index  string
	status job.Status // the status of the walked index's entries; "" when any
	checks []string   // indexes a listed job's entry is in besides the walked one
	names  string     // the names hash that decides the name filter, "" when jobs must
	// filtered: the filter may reject a job whose entry is in the walked
	// index and every checked one (a name, or what no index walked covers).
	filtered bool
	limit    int
	upper    string // exclusive ZREVRANGEBYLEX bound of the next batch
	jobs     []*job.Job
	last     string   // last member looked at
	read     int      // entries read from the walked index
	loaded   int      // jobs loaded
	done     bool     // the index has no entries past last
	gone     []string // entries of jobs that do not exist
	strays   []string // entries of this index that their job disagrees with for good
}

func (sc *scan) run(ctx context.Context) error {
	for len(sc.jobs) < sc.limit && sc.loaded < maxScan && sc.read < maxIndexScan && !sc.done {
		batch := int64(sc.limit - len(sc.jobs))
		switch {
		case len(sc.checks) > 0 || sc.names != "":
			batch = max(batch, checkBatch) // checks reject entries cheaply: read far ahead
		case sc.filtered:
			batch = max(batch, 100) // the filter rejects loaded jobs: read ahead
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

// take loads the jobs of members that pass the checks and keeps those
// that match, stopping when the page is full; it returns how many
// members it looked at.
func (sc *scan) take(ctx context.Context, members []string) (int, error) {
	pass, err := sc.s.inAll(ctx, sc.checks, members)
	if err != nil {
		return 0, err
	}
	if err := sc.checkNames(ctx, members, pass); err != nil {
		return 0, err
	}
	// Load no more jobs than the page still needs: the members past them
	// are read again by the next batch if it does.
	var ids []string
	need := sc.limit - len(sc.jobs)
	if sc.filtered {
		need = len(members) // the jobs alone tell which match
	}
	for i, m := range members {
		if len(ids) == need {
			members = members[:i]
			break
		}
		if pass[i] {
			ids = append(ids, memberID(m))
		}
	}
	loaded, err := sc.s.loadJobs(ctx, sc.s.rdb, ids)
	if err != nil {
		return 0, err
	}
	for i, m := range members {
		sc.last, sc.upper = m, "("+m
		sc.read++
		if !pass[i] {
			continue
		}
		j := loaded[0]
		loaded = loaded[1:]
		sc.loaded++
		switch sc.s.classify(m, j, sc.status) {
		case entryGone:
			sc.gone = append(sc.gone, m)
		case entryStray:
			sc.strays = append(sc.strays, m)
		case entryLive:
			if sc.f.match(j) {
				sc.jobs = append(sc.jobs, j)
			}
		}
		if len(sc.jobs) == sc.limit || sc.loaded == maxScan {
			return i + 1, nil
		}
	}
	return len(members), nil
}

// inAll reports, for each member, whether every index of checks holds it:
// one ZMSCORE per index.
func (s *Store) inAll(ctx context.Context, checks []string, members []string) ([]bool, error) {
	pass := make([]bool, len(members))
	for i := range pass {
		pass[i] = true
	}
	if len(checks) == 0 || len(members) == 0 {
		return pass, nil
	}
	args := make([]any, 0, len(members)+2)
	args = append(args, "zmscore", "")
	for _, m := range members {
		args = append(args, m)
	}
	cmds := make([]*redis.Cmd, len(checks))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, idx := range checks {
			a := slices.Clone(args)
			a[1] = idx
			cmds[i] = p.Do(ctx, a...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, c := range cmds {
		scores, err := c.Slice()
		if err != nil {
			return nil, err
		}
		for i, sc := range scores {
			if sc == nil && i < len(pass) {
				pass[i] = false
			}
		}
	}
	return pass, nil
}

// checkNames clears pass for the members whose job's name, as the names
// hash holds it, does not contain the filter's name. A member the hash
// lacks stays: its job is loaded and tells.
func (sc *scan) checkNames(ctx context.Context, members []string, pass []bool) error {
	if sc.names == "" {
		return nil
	}
	var fields []string
	for i, m := range members {
		if pass[i] {
			fields = append(fields, m)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	names, err := sc.s.rdb.HMGet(ctx, sc.names, fields...).Result()
	if err != nil {
		return err
	}
	want := strings.ToLower(sc.f.Name)
	k := 0
	for i := range members {
		if !pass[i] {
			continue
		}
		if name, ok := names[k].(string); ok && !strings.Contains(name, want) {
			pass[i] = false
		}
		k++
	}
	return nil
}

// forget removes entries of missing jobs from every index they can be in
// that is known (the owner and labels are gone with the job, so only the
// filter's are), and stray entries from the walked index.
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
		if sc.f.Owner != "" {
			p.ZRem(ctx, ownerIndexKey(sc.f.Owner), gone...)
			for _, st := range statuses() {
				p.ZRem(ctx, ownerStatusIndexKey(sc.f.Owner, st), gone...)
			}
			for k, v := range sc.f.Labels {
				p.ZRem(ctx, ownerLabelIndexKey(sc.f.Owner, k, v), gone...)
			}
			p.HDel(ctx, ownerNamesKey(sc.f.Owner), sc.gone...)
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
