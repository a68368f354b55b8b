package store_test

import (
	"testing"
	"time"
)

// TestForgeCommentLock: one holder per comment at a time, released only by
// its holder, and run out by itself; another comment's lock is apart.
func TestForgeCommentLock(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	const pr12, pr13 = "github acme/shop#12 <!-- benchq:benchq/x -->", "github acme/shop#13 <!-- benchq:benchq/x -->"
	steps := []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"a takes it", func() (bool, error) { return s.LockForgeComment(ctx, pr12, "a", time.Minute) }, true},
		{"b cannot", func() (bool, error) { return s.LockForgeComment(ctx, pr12, "b", time.Minute) }, false},
		{"b takes another request's", func() (bool, error) { return s.LockForgeComment(ctx, pr13, "b", time.Minute) }, true},
		{"b's unlock leaves a's", func() (bool, error) {
			err := s.UnlockForgeComment(ctx, pr12, "b")
			ok, _ := s.LockForgeComment(ctx, pr12, "c", time.Minute)
			return !ok, err
		}, true},
		{"a unlocks, c takes it", func() (bool, error) {
			if err := s.UnlockForgeComment(ctx, pr12, "a"); err != nil {
				return false, err
			}
			return s.LockForgeComment(ctx, pr12, "c", 100*time.Millisecond)
		}, true},
		{"c's runs out", func() (bool, error) {
			time.Sleep(200 * time.Millisecond)
			return s.LockForgeComment(ctx, pr12, "d", time.Minute)
		}, true},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil || got != st.want {
			t.Fatalf("%s: = %v, %v; want %v", st.name, got, err, st.want)
		}
	}
}
