package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/webhook"
)

// DeliveryLog is one delivery with every attempt made at it.
type DeliveryLog struct {
	webhook.Delivery
	Attempts []webhook.Attempt `json:"attempts"`
}

// SetWebhookSecret stores the secret that signs job id's webhooks, apart
// from the job JSON so no read of the job ever shows it.
func (s *Store) SetWebhookSecret(ctx context.Context, id, secret string) error {
	if err := s.rdb.Set(ctx, webhookSecretKey(id), secret, s.retention).Err(); err != nil {
		return fmt.Errorf("store: set webhook secret of job %s: %w", id, err)
	}
	return nil
}

// WebhookSecret returns job id's signing secret, or ErrNotFound.
func (s *Store) WebhookSecret(ctx context.Context, id string) (string, error) {
	v, err := s.rdb.Get(ctx, webhookSecretKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("store: webhook secret of job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: webhook secret of job %s: %w", id, err)
	}
	return v, nil
}

// createDelivery adds a delivery to a job's list unless one for its event
// is already there, in one step inside Redis: two attempts of the same
// job:run task racing to notify get one delivery between them, and no
// reader ever sees a half-written record. It returns {1, n} when it added
// delivery n, {0, n, record} when delivery n already was that event's.
// Only the list is touched, so the script stays within one cluster slot.
var createDelivery = redis.NewScript(`
local all = redis.call('LRANGE', KEYS[1], 0, -1)
for i, raw in ipairs(all) do
  if cjson.decode(raw)['event'] == ARGV[1] then
    return {0, i, raw}
  end
end
local n = redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, n}
`)

// CreateDelivery adds d to its job's deliveries and sets d.N, unless the
// job already has a delivery for d.Event: then *d becomes that one and
// created is false. The job must exist (ErrNotFound otherwise).
func (s *Store) CreateDelivery(ctx context.Context, d *webhook.Delivery) (created bool, err error) {
	if err := s.mustExist(ctx, d.JobID); err != nil {
		return false, fmt.Errorf("store: create delivery: %w", err)
	}
	data, err := encodeDelivery(*d)
	if err != nil {
		return false, fmt.Errorf("store: create %s delivery of job %s: %w", d.Event, d.JobID, err)
	}
	res, err := createDelivery.Run(ctx, s.rdb, []string{deliveriesKey(d.JobID)},
		d.Event, data, s.retention.Milliseconds()).Slice()
	if err != nil {
		return false, fmt.Errorf("store: create %s delivery of job %s: %w", d.Event, d.JobID, err)
	}
	if err := s.rdb.Expire(ctx, webhookSecretKey(d.JobID), s.retention).Err(); err != nil {
		return false, fmt.Errorf("store: create %s delivery of job %s: %w", d.Event, d.JobID, err)
	}
	created, n, existing, err := createReply(res)
	if err != nil {
		return false, fmt.Errorf("store: create %s delivery of job %s: %w", d.Event, d.JobID, err)
	}
	if !created {
		var found webhook.Delivery
		if err := json.Unmarshal([]byte(existing), &found); err != nil {
			return false, fmt.Errorf("store: delivery %d of job %s: decode: %w", n, d.JobID, err)
		}
		*d = found
	}
	d.N = n
	return created, nil
}

// createReply reads createDelivery's answer.
func createReply(res []any) (created bool, n int, existing string, err error) {
	if len(res) < 2 {
		return false, 0, "", fmt.Errorf("%d values in the reply, want 2 or 3", len(res))
	}
	flag, ok1 := res[0].(int64)
	pos, ok2 := res[1].(int64)
	if !ok1 || !ok2 {
		return false, 0, "", fmt.Errorf("reply %v: want integers first", res)
	}
	if flag == 0 {
		if len(res) != 3 {
			return false, 0, "", fmt.Errorf("%d values in the reply, want 3", len(res))
		}
		existing, ok := res[2].(string)
		if !ok {
			return false, 0, "", fmt.Errorf("reply %v: want the record third", res)
		}
		return false, int(pos), existing, nil
	}
	return true, int(pos), "", nil
}

// encodeDelivery and encodeAttempt write a record without its number,
// which is its position in its list (a push inside Redis decides it).
func encodeDelivery(d webhook.Delivery) (string, error) {
	d.N = 0
	data, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return string(data), nil
}

func encodeAttempt(a webhook.Attempt) (string, error) {
	a.N = 0
	data, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return string(data), nil
}

// Delivery returns delivery n of job id, or ErrNotFound.
func (s *Store) Delivery(ctx context.Context, id string, n int) (*webhook.Delivery, error) {
	d, err := s.loadDelivery(ctx, s.rdb, id, n)
	if err != nil {
		return nil, fmt.Errorf("store: delivery %d of job %s: %w", n, id, err)
	}
	return d, nil
}

// UpdateDelivery applies fn to delivery n of job id and stores the
// result, atomically (fn may run again if another writer got in first).
// An error from fn aborts the update and is returned wrapped.
func (s *Store) UpdateDelivery(ctx context.Context, id string, n int, fn func(*webhook.Delivery) error) (*webhook.Delivery, error) {
	key := deliveriesKey(id)
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		var out *webhook.Delivery
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			d, err := s.loadDelivery(ctx, tx, id, n)
			if err != nil {
				return err
			}
			if err := fn(d); err != nil {
				return err
			}
			d.JobID, d.N = id, n
			data, err := encodeDelivery(*d)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.LSet(ctx, key, int64(n-1), data)
				s.touchDeliveries(ctx, p, id)
				return nil
			})
			out = d
			return err
		}, key)
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, redis.TxFailedErr):
			if err := sleepJitter(ctx, attempt); err != nil {
				return nil, fmt.Errorf("store: update delivery %d of job %s: %w", n, id, err)
			}
		default:
			return nil, fmt.Errorf("store: update delivery %d of job %s: %w", n, id, err)
		}
	}
	return nil, fmt.Errorf("store: update delivery %d of job %s: %w: still contended", n, id, ErrConflict)
}

// appendAttempt pushes an attempt record and refreshes the list's TTL in
// one step, returning the attempt's number (the list's new length).
var appendAttempt = redis.NewScript(`
local n = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`)

// AppendAttempt logs an attempt at delivery n of job id and sets a.N.
func (s *Store) AppendAttempt(ctx context.Context, id string, n int, a *webhook.Attempt) error {
	data, err := encodeAttempt(*a)
	if err != nil {
		return fmt.Errorf("store: log attempt at delivery %d of job %s: %w", n, id, err)
	}
	num, err := appendAttempt.Run(ctx, s.rdb, []string{attemptsKey(id, n)}, data, s.retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("store: log attempt at delivery %d of job %s: %w", n, id, err)
	}
	a.N = num
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		s.touchDeliveries(ctx, p, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: log attempt at delivery %d of job %s: %w", n, id, err)
	}
	return nil
}

// Deliveries returns every delivery of job id with its attempts, in
// order; none is an empty slice.
func (s *Store) Deliveries(ctx context.Context, id string) ([]DeliveryLog, error) {
	raw, err := s.rdb.LRange(ctx, deliveriesKey(id), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("store: deliveries of job %s: %w", id, err)
	}
	out := make([]DeliveryLog, len(raw))
	attempts := make([]*redis.StringSliceCmd, len(raw))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range raw {
			attempts[i] = p.LRange(ctx, attemptsKey(id, i+1), 0, -1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: attempts of job %s: %w", id, err)
	}
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i].Delivery); err != nil {
			return nil, fmt.Errorf("store: delivery %d of job %s: decode: %w", i+1, id, err)
		}
		out[i].N, out[i].JobID = i+1, id
		out[i].Attempts = make([]webhook.Attempt, 0, len(attempts[i].Val()))
		for k, ra := range attempts[i].Val() {
			var a webhook.Attempt
			if err := json.Unmarshal([]byte(ra), &a); err != nil {
				return nil, fmt.Errorf("store: attempt %d of delivery %d of job %s: decode: %w", k+1, i+1, id, err)
			}
			a.N = k + 1
			out[i].Attempts = append(out[i].Attempts, a)
		}
	}
	return out, nil
}

// loadDelivery reads delivery n through c (the client or a WATCHed
// transaction).
func (s *Store) loadDelivery(ctx context.Context, c redis.Cmdable, id string, n int) (*webhook.Delivery, error) {
	if n < 1 {
		return nil, ErrNotFound
	}
	raw, err := c.LIndex(ctx, deliveriesKey(id), int64(n-1)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var d webhook.Delivery
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	d.JobID, d.N = id, n
	return &d, nil
}

// touchDeliveries queues the retention TTL on a job's delivery list and on
// its secret, which must outlive every delivery it signs.
func (s *Store) touchDeliveries(ctx context.Context, p redis.Pipeliner, id string) {
	p.Expire(ctx, deliveriesKey(id), s.retention)
	p.Expire(ctx, webhookSecretKey(id), s.retention)
}
