package api

import (
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// fakeStore is an in-memory JobStore with the store's documented
// semantics: ErrNotFound for unknown ids, ErrConflict for cancelling a
// finished job, events readable after an id.
type fakeStore struct {
	mu       sync.Mutex
	jobs     map[string]*job.Job
	runs     map[string][]job.Run
	events   map[string][]store.Event
	lastList store.ListFilter
	probeErr error
	getErr   error // returned by GetJob when set
	panicGet bool
}

func newFakeStore() *fakeStore {
	return &fakeStore{jobs: map[string]*job.Job{}, runs: map[string][]job.Run{}, events: map[string][]store.Event{}}
}

func (f *fakeStore) CreateJob(_ context.Context, j *job.Job) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.jobs[j.ID]; ok {
		return store.ErrConflict
	}
	c := *j
	f.jobs[j.ID] = &c
	return nil
}

func (f *fakeStore) GetJob(_ context.Context, id string) (*job.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panicGet {
		panic("fake store: boom")
	}
	if f.getErr != nil {
		return nil, f.getErr
	}
	j, ok := f.jobs[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	c := *j
	return &c, nil
}

func (f *fakeStore) ListJobs(_ context.Context, lf store.ListFilter) ([]*job.Job, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastList = lf
	if lf.Cursor == "garbage" {
		return nil, "", fmt.Errorf("store: list: %w", store.ErrInvalidCursor)
	}
	var out []*job.Job
	for _, j := range f.jobs {
		if lf.Status == "" || j.Status == lf.Status {
			c := *j
			out = append(out, &c)
		}
	}
	return out, "next-page", nil
}

func (f *fakeStore) UpdateJob(_ context.Context, id string, fn func(*job.Job) error) (*job.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	if err := fn(j); err != nil {
		return nil, err
	}
	c := *j
	return &c, nil
}

func (f *fakeStore) AppendEvent(context.Context, string, string, any) error { return nil }

func (f *fakeStore) ReleaseTargets(context.Context, string, []string) error { return nil }

func (f *fakeStore) Runs(_ context.Context, id string) ([]job.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[id], nil
}

func (f *fakeStore) ReadEvents(ctx context.Context, id, after string, block time.Duration) ([]store.Event, error) {
	deadline := time.Now().Add(block)
	for {
		f.mu.Lock()
		var out []store.Event
		seen := after == ""
		for _, ev := range f.events[id] {
			if seen {
				out = append(out, ev)
			}
			seen = seen || ev.ID == after
		}
		f.mu.Unlock()
		if len(out) > 0 || time.Now().After(deadline) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (f *fakeStore) addEvent(id string, ev store.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events[id] = append(f.events[id], ev)
}

func (f *fakeStore) CountByStatus(context.Context) (map[job.Status]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[job.Status]int64{}
	for _, j := range f.jobs {
		out[j.Status]++
	}
	return out, nil
}

func (f *fakeStore) ProbeWrite(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.probeErr
}

func (f *fakeStore) DiscardJob(_ context.Context, d *job.Job) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j, ok := f.jobs[d.ID]; ok && j.Status != job.StatusQueued {
		return store.ErrConflict
	}
	delete(f.jobs, d.ID)
	return nil
}

// errFakeRedis is a Redis that refuses connections, as go-redis reports
// it; its text holds what a problem must never show.
var errFakeRedis error = &net.OpError{Op: "dial", Net: "tcp", Addr: fakeAddr("10.1.2.3:6379"),
	Err: fmt.Errorf("secret internal detail: %w", syscall.ECONNREFUSED)}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }
