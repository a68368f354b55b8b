package loadgen

import (
	"github.com/benchq/benchq/internal/measure"
	"sync"
)

// batchSize is how many completed requests a worker keeps before it adds
// them to its shard: one lock per batch, and a worker's own memory stays a
// few hundred bytes however long the run.
const batchSize = 32

// record is one completed request's timings in µs and, when the run keeps
// a timeline, one event of it: a completion, a failure or bytes read.
type record struct {
	connect, waiting, total, uncorrected int64
	handshake                            int64 // -1: no TLS handshake
	status                               int32

	// The timeline's, set only when the engine records one; the small
	// fields share status's word.
	kind         uint8 // recCompleted, recFailed, recBytes
	failedAs     uint8 // recFailed's class
	lengthFailed bool  // recCompleted with a body of another length
	warm         bool  // in the warm-up: the timeline's only
	at           int64 // ns from the timeline's origin to the event
	bytes        int64 // received since the worker's previous record
	started      int64 // open model: ns from the origin to the actual start; -1 otherwise
	// lag is the open model's send lag in µs, from the intended to the
	// actual start: set in every open-model record, timeline or not.
	lag int64
}

// shard holds the histograms of a group of workers. Histograms are ~190 KB
// each, so one set per worker would grow with Concurrency (about 1 MB per
// worker); one set per CPU, fed in batches, costs the same at any
// Concurrency and merges exactly at the end.
type shard struct {
	mu                                  sync.Mutex
	connect, processing, waiting, total measure.Phase
	uncorrected                         measure.Phase // open model only
	sendLag                             measure.Phase // open model only
	handshake                           measure.Phase // created at the first TLS handshake
	status                              map[int]int64
	timeline                            *timelineRecorder // nil when the run keeps none
}

func newShard(open bool) *shard {
	s := &shard{
		connect:    measure.NewPhase(),
		processing: measure.NewPhase(),
		waiting:    measure.NewPhase(),
		total:      measure.NewPhase(),
		status:     make(map[int]int64),
	}
	if open {
		s.uncorrected = measure.NewPhase()
		s.sendLag = measure.NewPhase()
	}
	return s
}

// add records a batch of completed requests.
func (s *shard) add(recs []record, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		r := &recs[i]
		if s.timeline != nil {
			s.timeline.add(r)
		}
		if r.warm || r.kind == recBytes {
			continue
		}
		if open {
			s.sendLag.Record(r.lag)
		}
		if r.kind != recCompleted {
			continue
		}
		s.connect.Record(r.connect)
		s.processing.Record(r.uncorrected - r.connect)
		s.waiting.Record(r.waiting)
		s.total.Record(r.total)
		if open {
			s.uncorrected.Record(r.uncorrected)
		}
		if r.handshake >= 0 {
			if s.handshake.Hist == nil {
				s.handshake = measure.NewPhase()
			}
			s.handshake.Record(r.handshake)
		}
		s.status[int(r.status)]++
	}
}

// into adds the shard to m; called once every worker has stopped, after
// which the shard is not used again. A phase m does not have yet is moved
// rather than merged: a pinned run has a single shard, and copying its
// histograms into fresh ones would allocate and scan ~190 KB per phase for
// nothing.
func (s *shard) into(m *measure.Measurement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	moveInto(&m.Connect, &s.connect)
	moveInto(&m.Processing, &s.processing)
	moveInto(&m.Waiting, &s.waiting)
	moveInto(&m.Total, &s.total)
	moveInto(&m.Handshake, &s.handshake)
	if m.Open != nil {
		moveInto(&m.Open.Uncorrected, &s.uncorrected)
		moveInto(&m.Open.SendLag, &s.sendLag)
	}
	for code, n := range s.status {
		m.StatusCodes[code] += n
	}
}

// moveInto gives dst what Merge would, taking src's histogram when dst has
// none; src is left empty.
func moveInto(dst, src *measure.Phase) {
	if src.Count > 0 && dst.Count == 0 && dst.Hist == nil {
		*dst, *src = *src, measure.Phase{}
		return
	}
	dst.Merge(src)
}
