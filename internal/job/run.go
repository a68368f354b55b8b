package job

import (
	"errors"
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/measure"
)

// ErrNoMeasurement is returned for a run stored without its measurement (by
// a worker older than the field): its Result is all there is, and it cannot
// be merged exactly.
var ErrNoMeasurement = errors.New("job: run has no stored measurement")

// ErrShardsDisagree is wrapped by MergeShards' error when the runs given are
// not shards of one run (no runs, different run keys or targets).
var ErrShardsDisagree = errors.New("job: runs are not shards of one run")

// NewRun is the stored form of run k of a point on target at concurrency,
// measured as m from started to finished: the ab-compatible Result built
// from m with o, and m itself encoded, so the run can later be merged
// exactly.
func NewRun(k RunKey, target string, concurrency int, started, finished time.Time, m *measure.Measurement, o abreport.Options) (*Run, error) {
	enc, err := measure.EncodeMeasurement(m)
	if err != nil {
		return nil, fmt.Errorf("job: run %v: %w", k, err)
	}
	return &Run{
		RunKey: k, Target: target, Concurrency: concurrency,
		StartedAt: started, FinishedAt: finished,
		Result:      abreport.FromMeasurement(m, o),
		Measurement: enc,
	}, nil
}

// DecodeMeasurement reads back the run's stored measurement; ErrNoMeasurement
// for a run stored without one, an error wrapping measure.ErrBadEncoding for
// one that does not decode.
func (r *Run) DecodeMeasurement() (*measure.Measurement, error) {
	if len(r.Measurement) == 0 {
		return nil, fmt.Errorf("run %v: %w", r.RunKey, ErrNoMeasurement)
	}
	m, err := measure.DecodeMeasurement(r.Measurement)
	if err != nil {
		return nil, fmt.Errorf("job: run %v: %w", r.RunKey, err)
	}
	if m == nil {
		return nil, fmt.Errorf("run %v: %w", r.RunKey, ErrNoMeasurement)
	}
	return m, nil
}

// MergeShards merges shards, parts of one run measured at the same time by
// several processes (the same run key and target), into that run: their
// measurements merged exactly (counts, bytes, status codes, each phase's
// sums, extremes and histogram; concurrency adds, the elapsed time spans
// from the first shard's start to the last one's end; see
// measure.Measurement.Merge), its Result built from the merge
// with the options the shards' results were built with, from the earliest
// start to the latest finish, at the sum of the shards' Concurrency (each
// shard's share of the point's). A single shard gives an equal copy of itself.
// Every shard needs its stored measurement (else ErrNoMeasurement); shards
// of different runs give an error wrapping ErrShardsDisagree.
func MergeShards(shards []Run) (*Run, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("%w: none given", ErrShardsDisagree)
	}
	first := &shards[0]
	var merged measure.Measurement
	var o abreport.Options
	if first.Result != nil {
		o = abreport.Options{VariableLength: first.Result.VariableLength, BodySent: first.Result.BodySent}
	}
	started, finished := first.StartedAt, first.FinishedAt
	concurrency := 0
	for i := range shards {
		s := &shards[i]
		if s.RunKey != first.RunKey || s.Target != first.Target {
			return nil, fmt.Errorf("%w: shard %d is run %v on %s, shard 0 run %v on %s",
				ErrShardsDisagree, i, s.RunKey, s.Target, first.RunKey, first.Target)
		}
		m, err := s.DecodeMeasurement()
		if err != nil {
			return nil, fmt.Errorf("job: merge shard %d: %w", i, err)
		}
		merged.Merge(m)
		concurrency += s.Concurrency
		if s.StartedAt.Before(started) {
			started = s.StartedAt
		}
		if s.FinishedAt.After(finished) {
			finished = s.FinishedAt
		}
	}
	run, err := NewRun(first.RunKey, first.Target, concurrency, started, finished, &merged, o)
	if err != nil {
		return nil, err
	}
	run.Testbed = sameTestbed(shards)
	return run, nil
}

// sameTestbed is the testbed every shard ran on, nil when they differ or
// any has none.
func sameTestbed(shards []Run) *Testbed {
	first := shards[0].Testbed
	for _, s := range shards {
		if s.Testbed == nil || first == nil || *s.Testbed != *first {
			return nil
		}
	}
	t := *first
	return &t
}
