package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// IdempotencyTTL is how long an Idempotency-Key keeps naming the job its
// first request created.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyClaimTTL frees a key whose claimant died between claiming it
// and recording its job. The API must settle a claim well within it (it
// bounds job creation below it, see api/idempotency.go): a claim that
// expires while its job is still being created lets a retry create a
// second job. Creation is bounded at 20 s and storing plus enqueueing the
// accepted job at 10 s more; 60 s leaves a margin for a slow Redis.
const IdempotencyClaimTTL = 60 * time.Second

// ErrIdempotencyClaimLost: the claim expired before its job was recorded
// and another request claimed the key meanwhile.
var ErrIdempotencyClaimLost = errors.New("store: idempotency claim lost")

// IdempotencyRecord is what one owner's Idempotency-Key holds.
type IdempotencyRecord struct {
	BodyHash string // hex SHA-256 of the body of the request that claimed the key
	JobID    string // empty while that request is still creating its job
	// SecretIssued: the answer that created JobID carried a webhook secret
	// generated for the job, so a replay to the same caller may too.
	SecretIssued bool

	key, raw string // the Redis key and the value read, for compare-and-set
}

// Pending reports whether the claimant has not recorded a job yet.
func (r IdempotencyRecord) Pending() bool { return r.JobID == "" }

// compareAndSet replaces KEYS[1] by ARGV[2] with a PX of ARGV[3] ms, or
// deletes it when ARGV[2] is empty, only while it still holds ARGV[1]: a
// claimant whose claim expired must not overwrite its successor's.
var compareAndSet = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == "" then redis.call("DEL", KEYS[1]) else redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3]) end
return 1`)

// ClaimIdempotencyKey claims key for owner's request with body hash
// bodyHash. It reports won when no other request held the key: the caller
// must then CompleteIdempotencyKey with the job it creates, or
// ReleaseIdempotencyKey when it creates none. Otherwise it returns the
// key's record, which may still be pending.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, owner, key, bodyHash string) (rec IdempotencyRecord, won bool, err error) {
	k := idempotencyKey(owner, key)
	raw := "pending " + bodyHash + " " + claimToken()
	// A key can vanish between SETNX and GET (claim released or expired):
	// claim again, a few times.
	for range 3 {
		ok, err := s.rdb.SetNX(ctx, k, raw, IdempotencyClaimTTL).Result()
		if err != nil {
			return IdempotencyRecord{}, false, fmt.Errorf("store: claim idempotency key: %w", err)
		}
		if ok {
			return IdempotencyRecord{BodyHash: bodyHash, key: k, raw: raw}, true, nil
		}
		rec, err := s.readIdempotency(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		return rec, false, err
	}
	return IdempotencyRecord{}, false, fmt.Errorf("store: claim idempotency key: %w", ErrConflict)
}

// IdempotencyKey returns owner's record of key, or ErrNotFound.
func (s *Store) IdempotencyKey(ctx context.Context, owner, key string) (IdempotencyRecord, error) {
	return s.readIdempotency(ctx, idempotencyKey(owner, key))
}

// DeliveryTTL is how long a CI delivery keeps naming the job it created:
// GitHub redelivers a delivery (by hand or by its API) for three days.
const DeliveryTTL = 72 * time.Hour

// CompleteIdempotencyKey records jobID on a won claim for IdempotencyTTL,
// and whether its answer carried a generated webhook secret.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, claim IdempotencyRecord, jobID string, secretIssued bool) error {
	return s.completeIdempotencyKey(ctx, claim, jobID, secretIssued, IdempotencyTTL)
}

// CompleteDelivery records jobID on a won claim of a CI delivery, for
// DeliveryTTL.
func (s *Store) CompleteDelivery(ctx context.Context, claim IdempotencyRecord, jobID string) error {
	return s.completeIdempotencyKey(ctx, claim, jobID, false, DeliveryTTL)
}

func (s *Store) completeIdempotencyKey(ctx context.Context, claim IdempotencyRecord, jobID string, secretIssued bool, ttl time.Duration) error {
	done := "done " + claim.BodyHash + " " + jobID
	if secretIssued {
		done += " " + secretIssuedMark
	}
	if err := s.casIdempotency(ctx, claim, done, ttl); err != nil {
		return fmt.Errorf("store: record job %s on idempotency key: %w", jobID, err)
	}
	return nil
}

// ReleaseIdempotencyKey frees a key, if it still holds rec: a won claim
// whose request created no job, or a record naming a job that is gone.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, rec IdempotencyRecord) error {
	if err := s.casIdempotency(ctx, rec, "", 0); err != nil {
		return fmt.Errorf("store: release idempotency key: %w", err)
	}
	return nil
}

func (s *Store) casIdempotency(ctx context.Context, rec IdempotencyRecord, value string, ttl time.Duration) error {
	if rec.key == "" {
		return errors.New("record was not read from the store")
	}
	n, err := compareAndSet.Run(ctx, s.rdb, []string{rec.key}, rec.raw, value, ttl.Milliseconds()).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrIdempotencyClaimLost
	}
	return nil
}

func (s *Store) readIdempotency(ctx context.Context, k string) (IdempotencyRecord, error) {
	raw, err := s.rdb.Get(ctx, k).Result()
	if errors.Is(err, redis.Nil) {
		return IdempotencyRecord{}, fmt.Errorf("store: idempotency key: %w", ErrNotFound)
	}
	if err != nil {
		return IdempotencyRecord{}, fmt.Errorf("store: idempotency key: %w", err)
	}
	state, rest, _ := strings.Cut(raw, " ")
	hash, last, ok := strings.Cut(rest, " ")
	if !ok || (state != "pending" && state != "done") {
		return IdempotencyRecord{}, fmt.Errorf("store: idempotency key holds %q", raw)
	}
	rec := IdempotencyRecord{BodyHash: hash, key: k, raw: raw}
	if state == "done" {
		id, mark, _ := strings.Cut(last, " ")
		rec.JobID, rec.SecretIssued = id, mark == secretIssuedMark
	}
	return rec, nil
}

// secretIssuedMark ends a done record whose job's answer carried a
// generated webhook secret; records written before it existed lack it.
const secretIssuedMark = "secret"

// claimToken tells two claims with the same body apart, so a claimant
// whose claim expired cannot complete or release its successor's.
func claimToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails short
	return hex.EncodeToString(b[:])
}
