package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxScheduledRuns is how many ticks' outcomes a schedule keeps.
const MaxScheduledRuns = 20

// ScheduledRun is what one tick of a schedule did: created JobID, or was
// skipped (Skipped says why), or stands for Missed ticks nobody ran.
type ScheduledRun struct {
	Tick    time.Time `json:"tick"`
	FiredAt time.Time `json:"fired_at"`
	JobID   string    `json:"job_id,omitempty"`
	// Skipped says why the tick created no job: the previous run still
	// going, ticks missed while no scheduler ran, or an error.
	Skipped string `json:"skipped,omitempty"`
	// Missed counts the ticks before this one that passed while no
	// scheduler ran.
	Missed int `json:"missed,omitempty"`
}

// ScheduleState is a schedule's state: the newest tick claimed (zero
// before the schedule was first seen), the last job a tick created, and
// the latest runs, newest first.
type ScheduleState struct {
	Tick    time.Time
	LastJob string
	Runs    []ScheduledRun
}

// claimTick moves the claimed tick to ARGV[1] when it is newer: of several
// schedulers evaluating the same tick, exactly one gets 1.
var claimTick = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[1])
return 1
`)

// StartSchedule records since as the tick a schedule seen for the first
// time starts after, unless one is recorded; it returns the recorded tick.
// Ticks before a schedule existed are not missed runs.
func (s *Store) StartSchedule(ctx context.Context, owner, name string, since time.Time) (time.Time, error) {
	key := scheduleKey(owner, name)
	if err := s.rdb.HSetNX(ctx, key, fieldTick, since.UnixMilli()).Err(); err != nil {
		return time.Time{}, fmt.Errorf("store: start schedule %s: %w", templateRef(owner, name), err)
	}
	ms, err := s.rdb.HGet(ctx, key, fieldTick).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("store: start schedule %s: %w", templateRef(owner, name), err)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// ClaimTick claims tick of owner's schedule name: true for exactly one
// caller per tick, however many schedulers ask, and false for a tick not
// newer than the newest claimed.
func (s *Store) ClaimTick(ctx context.Context, owner, name string, tick time.Time) (bool, error) {
	n, err := claimTick.Run(ctx, s.rdb, []string{scheduleKey(owner, name)}, tick.UnixMilli(), fieldTick).Int()
	if err != nil {
		return false, fmt.Errorf("store: claim tick %s of %s: %w", tick.Format(time.RFC3339), templateRef(owner, name), err)
	}
	return n == 1, nil
}

// RecordScheduledRun prepends r to the schedule's runs (keeping
// MaxScheduledRuns) and, when it created a job, makes that the last job.
func (s *Store) RecordScheduledRun(ctx context.Context, owner, name string, r ScheduledRun) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store: record scheduled run: %w", err)
	}
	runs := scheduleRunsKey(owner, name)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, runs, data)
		p.LTrim(ctx, runs, 0, MaxScheduledRuns-1)
		if r.JobID != "" {
			p.HSet(ctx, scheduleKey(owner, name), fieldLastJob, r.JobID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record scheduled run of %s: %w", templateRef(owner, name), err)
	}
	return nil
}

// GetScheduleState reads a schedule's state; a schedule never seen has
// the zero state.
func (s *Store) GetScheduleState(ctx context.Context, owner, name string) (ScheduleState, error) {
	return s.scheduleState(ctx, owner, name, true)
}

// GetScheduleTick is GetScheduleState without the runs: what a scheduler
// reads of every schedule every poll.
func (s *Store) GetScheduleTick(ctx context.Context, owner, name string) (ScheduleState, error) {
	return s.scheduleState(ctx, owner, name, false)
}

func (s *Store) scheduleState(ctx context.Context, owner, name string, withRuns bool) (ScheduleState, error) {
	var st ScheduleState
	var vals *redis.SliceCmd
	runs := &redis.StringSliceCmd{}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		vals = p.HMGet(ctx, scheduleKey(owner, name), fieldTick, fieldLastJob)
		if withRuns {
			runs = p.LRange(ctx, scheduleRunsKey(owner, name), 0, -1)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return st, fmt.Errorf("store: schedule state of %s: %w", templateRef(owner, name), err)
	}
	v := vals.Val()
	if len(v) == 2 {
		if t, ok := v[0].(string); ok {
			if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
				st.Tick = time.UnixMilli(ms).UTC()
			}
		}
		st.LastJob, _ = v[1].(string)
	}
	for _, raw := range runs.Val() {
		var r ScheduledRun
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return st, fmt.Errorf("store: schedule runs of %s: %w", templateRef(owner, name), err)
		}
		st.Runs = append(st.Runs, r)
	}
	return st, nil
}

// deleteScheduleState drops a deleted template's schedule state, so a new
// template of the name starts afresh; a failure leaves state that the new
// template's schedule continues from.
func (s *Store) deleteScheduleState(ctx context.Context, owner, name string) {
	_ = s.rdb.Del(ctx, scheduleKey(owner, name), scheduleRunsKey(owner, name)).Err()
}
