package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// watcher runs WatchEvents in the background and hands its calls to the
// test: job ids on notices, one value on resyncs.
type watcher struct {
	notices chan string
	resyncs chan struct{}
	done    chan error
}

func watch(t *testing.T, s *store.Store) *watcher {
	t.Helper()
	w := &watcher{notices: make(chan string, 100), resyncs: make(chan struct{}, 10), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		w.done <- s.WatchEvents(ctx, func(id string) { w.notices <- id }, func() { w.resyncs <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil {
			t.Errorf("WatchEvents after its context ended = %v, want nil", err)
		}
	})
	return w
}

// subscribed waits for a (re)subscription.
func (w *watcher) subscribed(t *testing.T, why string) {
	t.Helper()
	select {
	case <-w.resyncs:
	case <-time.After(10 * time.Second):
		t.Fatalf("no resync %s within 10s", why)
	}
}

// wantNotices waits for a notice of each of ids, in any order.
func (w *watcher) wantNotices(t *testing.T, ids ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, id := range ids {
		missing[id] = true
	}
	deadline := time.After(5 * time.Second)
	for len(missing) > 0 {
		select {
		case id := <-w.notices:
			delete(missing, id)
		case <-deadline:
			t.Fatalf("no notice for %v within 5s", missing)
		}
	}
}

func appendEvents(t *testing.T, s *store.Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := s.AppendEvent(t.Context(), id, job.EventProgress, map[string]int{"runs_done": 1}); err != nil {
			t.Fatalf("AppendEvent(%s) = %v", id, err)
		}
	}
}

func TestWatchEventsAnnouncesAppends(t *testing.T) {
	s, _ := newStore(t)
	w := watch(t, s)
	w.subscribed(t, "at the start")
	appendEvents(t, s, "j1", "j2", "j1")
	w.wantNotices(t, "j1", "j2", "j1")
}

// TestWatchEventsResyncsAfterRestart: notices published while Redis was
// away are lost, so the watcher must say when it subscribed again.
func TestWatchEventsResyncsAfterRestart(t *testing.T) {
	srv := redistest.Start(t)
	s := store.New(srv.Client(t), store.Options{})
	w := watch(t, s)
	w.subscribed(t, "at the start")
	srv.Restart(t)
	w.subscribed(t, "after Redis restarted")
	appendEvents(t, s, "j-after")
	w.wantNotices(t, "j-after")
}

// TestWatchEventsOnCluster: the subscription sits on one node, while the
// jobs' streams (and the PUBLISH beside each XADD) spread over all three.
func TestWatchEventsOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node Redis Cluster; skipped with -short")
	}
	s := store.New(redistest.StartCluster(t, 3).Client(t), store.Options{})
	w := watch(t, s)
	w.subscribed(t, "at the start")
	var ids []string
	for i := range 12 {
		ids = append(ids, fmt.Sprintf("cluster-job-%d", i))
	}
	appendEvents(t, s, ids...)
	w.wantNotices(t, ids...)
	if _, err := s.ActiveKeys(t.Context(), []string{"key_a", "key_b"}); err != nil {
		t.Errorf("ActiveKeys on a cluster = %v", err)
	}
}

// TestWatchEventsFollowsSentinelFailover: after the master dies and the
// replica is promoted, the subscription moves to the new master, says so,
// and announces what is appended there.
func TestWatchEventsFollowsSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a Redis master and waits for the failover; skipped with -short")
	}
	sn := redistest.StartSentinel(t)
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: []string{sn.Sentinel.Addr}})
	t.Cleanup(func() { _ = fc.Close() })
	s := store.New(fc, store.Options{})
	w := watch(t, s)
	w.subscribed(t, "at the start")
	appendEvents(t, s, "before")
	w.wantNotices(t, "before")
	sn.Master.Kill()
	sn.WaitPromoted(t, 30*time.Second)
	w.subscribed(t, "after the failover")
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.AppendEvent(t.Context(), "after", job.EventProgress, map[string]int{"runs_done": 1})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("AppendEvent after the failover: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.wantNotices(t, "after")
}

func TestActiveKeys(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	var ids []string
	for _, name := range []string{"live", "revoked"} {
		k, _, err := apikey.New(name, false, apikey.Quota{}, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, k.ID)
	}
	if _, err := s.RevokeKey(ctx, ids[1], time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := s.ActiveKeys(ctx, []string{ids[0], ids[1], "key_never"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{ids[0]: true, ids[1]: false, "key_never": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ActiveKeys = %v, want %v", got, want)
	}
	if got, err := s.ActiveKeys(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("ActiveKeys(none) = %v, %v; want empty", got, err)
	}
}
