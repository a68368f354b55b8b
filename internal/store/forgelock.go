package store

import (
	"context"
	"fmt"
	"time"
)

// LockForgeComment takes the lock of one request comment on a forge
// (target names it: forge, repository, request and context) for holder
// for ttl, and reports whether it did. Two jobs of one pull request ending
// together would otherwise both look for the comment, find none and both
// create one. The lock runs out by itself, so a holder that died holds it
// no longer than ttl.
func (s *Store) LockForgeComment(ctx context.Context, target, holder string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, forgeCommentLockKey(target), holder, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("store: lock forge comment: %w", err)
	}
	return ok, nil
}

// UnlockForgeComment gives up holder's lock of target; another holder's
// is left alone.
func (s *Store) UnlockForgeComment(ctx context.Context, target, holder string) error {
	if err := releaseLease.Run(ctx, s.rdb, []string{forgeCommentLockKey(target)}, holder).Err(); err != nil {
		return fmt.Errorf("store: unlock forge comment: %w", err)
	}
	return nil
}
