package store

import (
	"context"
	"encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// Key builders for the external tests, which check what Redis holds.
var (
	JobKey              = jobKey
	RunsKey             = runsKey
	LeaseKey            = leaseKey
	WebhookSecretKey    = webhookSecretKey
	DeliveriesKey       = deliveriesKey
	AttemptsKey         = attemptsKey
	AllIndexKey         = allIndexKey
	StatusIndexKey      = statusIndexKey
	OwnerStatusIndexKey = ownerStatusIndexKey
	OwnerLabelIndexKey  = ownerLabelIndexKey
	IndexVersionKey     = indexVersionKey
)
var IndexMember = indexMember
var TaggedName = taggedName

// CreateJobsPipelined stores jobs as CreateJob does (the same commands,
// listing then writing), without its existence check and many per round
// trip: benchmarks fill a store with hundreds of thousands of jobs.
func (s *Store) CreateJobsPipelined(ctx context.Context, jobs []*job.Job) error {
	const batch = 500
	for len(jobs) > 0 {
		n := min(batch, len(jobs))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, j := range jobs[:n] {
				data, err := json.Marshal(j)
				if err != nil {
					return err
				}
				s.queueListing(ctx, p, j)
				s.queueJobWrite(ctx, p, j, data)
			}
			return nil
		})
		if err != nil {
			return err
		}
		jobs = jobs[n:]
	}
	return nil
}
