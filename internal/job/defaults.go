package job

import (
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// Defaults WithDefaults fills in, chosen to behave like ab run with no flags
// beyond the URL, except for the request count: ab's default of one request
// measures nothing, so a job defaults to 100.
const (
	DefaultMethod      = "GET"            // POST when the request has a body, as ab -p
	DefaultContentType = "text/plain"     // for a body without content_type, as ab
	DefaultTimeout     = 30 * time.Second // per request, ab -s
	DefaultMaxBody     = measure.DefaultMaxBody
	DefaultConcurrency = 1
	// DefaultOpenConcurrency caps requests in flight in the open model
	// (sweep.rate given, no concurrency): a cap of 1 could not hold a rate
	// against any latency above 1/rate.
	DefaultOpenConcurrency = 100
	DefaultRequests        = 100
	DefaultRepeats         = 1
	DefaultShards          = 1
)

// WithDefaults returns s with every unset field but the targets' addresses
// filled in. It never modifies s (slices and maps are copied before being
// changed) and is idempotent.
//
//   - targets: a missing name becomes "target-N" (N counts from 1).
//   - request (job-wide, and a target's own request when given): method GET,
//     or POST when there is a body; content_type text/plain for a body;
//     timeout 30s; max_body 1 GiB. A target with its own request uses it instead of the
//     job's, as a whole (it is not merged field by field). When every
//     target is an ab line, the job-wide request only lends them a body,
//     so only its content type is filled: the lines' flags decide the rest.
//   - sweep: repeats 1, order interleaved, shards 1. When no target comes
//     from an ab or http_load command line: concurrency [1] ([100] with a
//     rate) and,
//     when none of requests, duration or rate is listed, requests [100].
//     With command-line targets the lists stay empty here, because an
//     empty list means "each target's own flags" (see Points).
//   - webhook: events default to all three terminal events.
//   - exclusive: true.
func (s Spec) WithDefaults() Spec {
	s.Targets = append([]Target(nil), s.Targets...)
	fromFlags, allAB := false, len(s.Targets) > 0
	for i := range s.Targets {
		t := &s.Targets[i]
		if t.Name == "" {
			t.Name = fmt.Sprintf("target-%d", i+1)
		}
		if t.Request != nil && t.AB == "" {
			r := t.Request.withDefaults()
			t.Request = &r
		}
		fromFlags = fromFlags || t.AB != "" || t.HTTPLoad != ""
		allAB = allAB && t.AB != ""
	}
	if allAB {
		// ab lines decide method, keep-alive, timeout and headers; the
		// job-wide request gives them only a body and its content type.
		// Filled like any other, it would show "keepalive": false beside
		// a "-k" line that keeps connections alive.
		s.Request = s.Request.abDefaults()
	} else {
		s.Request = s.Request.withDefaults()
	}
	// Stages set the runs' load and length: no sweep list is defaulted.
	s.Sweep = s.Sweep.withDefaults(fromFlags || len(s.Stages) > 0)
	if s.Search != nil {
		se := s.Search.WithDefaults()
		s.Search = &se
	}
	s.CompareTo = s.CompareTo.withDefaults()
	if s.Exclusive == nil {
		exclusive := true
		s.Exclusive = &exclusive
	}
	if s.Webhook != nil && len(s.Webhook.Events) == 0 {
		w := *s.Webhook
		w.Events = w.Subscribed()
		s.Webhook = &w
	}
	return s
}

// abDefaults is withDefaults for a request only ab lines read.
func (r Request) abDefaults() Request {
	if r.Body != "" && r.ContentType == "" {
		r.ContentType = DefaultContentType
	}
	return r
}

func (r Request) withDefaults() Request {
	if r.Method == "" {
		r.Method = DefaultMethod
		if r.Body != "" {
			r.Method = "POST"
		}
	}
	if r.Body != "" && r.ContentType == "" {
		r.ContentType = DefaultContentType
	}
	if r.Timeout == 0 {
		r.Timeout = Duration(DefaultTimeout)
	}
	if r.MaxBody == 0 {
		r.MaxBody = DefaultMaxBody
	}
	return r
}

func (w Sweep) withDefaults(fromFlags bool) Sweep {
	if w.Repeats == 0 {
		w.Repeats = DefaultRepeats
	}
	if w.Shards == 0 {
		w.Shards = DefaultShards
	}
	if w.Order == "" {
		// Interleaved is the default (no DefaultOrder constant: swag would
		// list it as one more enum value of Order, in random order).
		w.Order = OrderInterleaved
	}
	if fromFlags {
		return w
	}
	if len(w.Concurrency) == 0 {
		w.Concurrency = []int{w.defaultConcurrency()}
	}
	if len(w.Requests) == 0 && len(w.Duration) == 0 && len(w.Rate) == 0 {
		w.Requests = []int{DefaultRequests}
	}
	return w
}

func (w Sweep) defaultConcurrency() int {
	if len(w.Rate) > 0 {
		return DefaultOpenConcurrency
	}
	return DefaultConcurrency
}

// hasStops reports whether the sweep lists any of requests, duration or
// rate, in which case those lists apply to every target.
func (w Sweep) hasStops() bool {
	return len(w.Requests) > 0 || len(w.Duration) > 0 || len(w.Rate) > 0
}
