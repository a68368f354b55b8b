package job

import (
	"math"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// MaxShards bounds sweep.shards: each shard holds a worker process for the
// whole run, and a barrier of more processes than a deployment has only
// waits out its bound.
const MaxShards = 64

// ShardRun is what a sharded run keeps of each of its shards beside the
// merged result: which worker process ran it, when its load started and
// ended, and its share of the work.
type ShardRun struct {
	Worker           string    `json:"worker"`
	StartedAt        time.Time `json:"started_at"`
	FinishedAt       time.Time `json:"finished_at"`
	CompleteRequests int64     `json:"complete_requests"`
	Concurrency      int       `json:"concurrency"`
}

// ShardCount is the number of worker processes each run of s runs on; an
// unset sweep.shards means one, as WithDefaults fills it.
func (s Spec) ShardCount() int {
	return max(s.Sweep.Shards, 1)
}

// Split divides n into k parts that differ by at most one, the larger
// parts first, so the parts sum to n: 10 over 3 is 4, 3, 3.
func Split(n, k int) []int {
	if k < 1 {
		return nil
	}
	parts := make([]int, k)
	q, r := n/k, n%k
	for i := range parts {
		parts[i] = q
		if i < r {
			parts[i]++
		}
	}
	return parts
}

// splitRate divides a rate like Split when it is a whole number of at
// least k requests per second, and into equal parts otherwise (a part of
// 0 would turn a shard into the closed model).
func splitRate(r float64, k int) []float64 {
	parts := make([]float64, k)
	if r == math.Trunc(r) && r >= float64(k) && r <= math.MaxInt32 {
		for i, n := range Split(int(r), k) {
			parts[i] = float64(n)
		}
		return parts
	}
	for i := range parts {
		parts[i] = r / float64(k)
	}
	return parts
}

// ShardPlan is shard i's part (0 ≤ i < k) of a run's plan: its share of
// the concurrency, the requests and the rate (Split), the same duration
// and request. Validate refuses a spec whose point has fewer workers or
// requests than shards, so no shard's part is empty; a plan ShardPlan is
// given that is anyway keeps at least one worker and one request.
func ShardPlan(p measure.Plan, i, k int) measure.Plan {
	if k <= 1 || i < 0 || i >= k {
		return p
	}
	p.Concurrency = max(Split(p.Concurrency, k)[i], 1)
	if p.Requests > 0 {
		p.Requests = max(Split(p.Requests, k)[i], 1)
		if p.Rate == 0 {
			p.Concurrency = min(p.Concurrency, p.Requests) // ab's rule: -n at least -c
		}
	}
	if p.Rate > 0 {
		p.Rate = splitRate(p.Rate, k)[i]
	}
	p.URLs = append([]string(nil), p.URLs...)
	return p
}
