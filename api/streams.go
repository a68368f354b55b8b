package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/store"
)

// StreamStore is what event streams need beyond JobStore; *store.Store
// implements it.
type StreamStore interface {
	// WatchEvents calls onEvent with the id of each job that got an event
	// and onResync whenever notices may have been lost, until ctx ends.
	WatchEvents(ctx context.Context, onEvent func(jobID string), onResync func()) error
	// ActiveKeys reports which of the key ids are not revoked.
	ActiveKeys(ctx context.Context, ids []string) (map[string]bool, error)
}

// Defaults of the stream caps when Config leaves them 0.
const (
	defaultMaxStreamsPerKey = 50
	defaultMaxStreams       = 1000
)

// streamsRetryAfter is the Retry-After of a refused stream: streams end
// with their jobs, so this is a polling interval, not a promise.
const streamsRetryAfter = 5 * time.Second

// streamReadSlots bounds how many streams read Redis at once. A stream
// takes a pooled connection only for one read, and a notice to a
// thousand streams must not take the whole pool from requests and
// /readyz: the rest of the pool (at least 10 connections) stays theirs.
const streamReadSlots = 4

// keyCheckInterval is how often the keys of open streams are checked for
// revocation: a revoked key's streams end within it plus one round trip.
const keyCheckInterval = 250 * time.Millisecond

// keyCheckTimeout bounds one revocation check.
const keyCheckTimeout = time.Second

// watchRetry is the pause before subscribing again when the notice
// subscription ended on its own.
const watchRetry = time.Second

// errKeyRevoked is why a stream whose key was revoked ended.
var errKeyRevoked = errors.New("api: api key revoked")

// streamHub is the process's registry of open event streams: it admits
// them under the caps, wakes the streams of a job when the one notice
// subscription announces an event, and ends the streams of revoked keys.
// An idle stream holds no Redis connection; only the subscription does.
type streamHub struct {
	st     StreamStore // nil: no notices (streams poll), no revocation checks
	events eventReader
	perKey int
	total  int
	log    *slog.Logger
	reads  chan struct{} // streamReadSlots tokens
	shared singleflight.Group

	mu    sync.Mutex
	byJob map[string]map[*streamWaiter]struct{}
	byKey map[string]map[*streamWaiter]struct{}
	open  int
}

// streamWaiter is one open stream as the hub sees it.
type streamWaiter struct {
	key, job string
	// wake holds one pending "look for events" signal; more coalesce.
	wake chan struct{}
	end  context.CancelCauseFunc
	// revoked is set (under the hub's lock) once end was called for a
	// revocation, so the stream is ended and logged once.
	revoked bool
}

// eventReader reads a job's events; JobStore has it.
type eventReader interface {
	ReadEvents(ctx context.Context, jobID, after string, block time.Duration) ([]store.Event, error)
}

func newStreamHub(st StreamStore, events eventReader, perKey, total int, log *slog.Logger) *streamHub {
	if perKey <= 0 {
		perKey = defaultMaxStreamsPerKey
	}
	if total <= 0 {
		total = defaultMaxStreams
	}
	return &streamHub{
		st: st, events: events, perKey: perKey, total: total, log: log,
		reads: make(chan struct{}, streamReadSlots),
		byJob: map[string]map[*streamWaiter]struct{}{},
		byKey: map[string]map[*streamWaiter]struct{}{},
	}
}

// run follows the notices and checks the keys of open streams until ctx
// ends. It does nothing without a StreamStore.
func (h *streamHub) run(ctx context.Context) {
	if h.st == nil {
		return
	}
	go h.checkKeys(ctx)
	for ctx.Err() == nil {
		err := h.st.WatchEvents(ctx, h.notify, h.wakeAll)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("api: event notices: subscription ended; streams poll until it is back", "err", err)
		h.wakeAll() // whatever was announced meanwhile
		select {
		case <-ctx.Done():
		case <-time.After(watchRetry):
		}
	}
}

// admit registers a stream of key on job, or refuses it with a 429 when
// the key or the process is at its cap. end is called with
// errKeyRevoked when the key is revoked. The caller must release it.
func (h *streamHub) admit(key, job string, end context.CancelCauseFunc) (*streamWaiter, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.byKey[key]); n >= h.perKey {
		e := errcode.Newf(errcode.TooManyStreams, "%d event streams open for this API key, limit %d; close one or retry later", n, h.perKey)
		e.Limit, e.Value, e.RetryAfter = h.perKey, n, streamsRetryAfter
		return nil, e
	}
	if h.open >= h.total {
		e := errcode.Newf(errcode.TooManyStreams, "this server has %d event streams open, its limit; retry later", h.total)
		e.Limit, e.RetryAfter = h.total, streamsRetryAfter
		return nil, e
	}
	w := &streamWaiter{key: key, job: job, wake: make(chan struct{}, 1), end: end}
	addWaiter(h.byKey, key, w)
	addWaiter(h.byJob, job, w)
	h.open++
	return w, nil
}

// release forgets a stream that ended.
func (h *streamHub) release(w *streamWaiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	removeWaiter(h.byKey, w.key, w)
	removeWaiter(h.byJob, w.job, w)
	h.open--
}

// count is the number of open streams, for /metrics.
func (h *streamHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}

// gauge reports the open streams on /metrics.
func (h *streamHub) gauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "benchq_event_streams_open",
		Help: "Event streams open in this API process.",
	}, func() float64 { return float64(h.count()) })
}

// notify wakes the streams of job. It never blocks: it runs on the
// subscription's one goroutine.
func (h *streamHub) notify(job string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.byJob[job] {
		w.signal()
	}
}

// wakeAll wakes every stream, after notices may have been lost.
func (h *streamHub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ws := range h.byJob {
		for w := range ws {
			w.signal()
		}
	}
}

func (w *streamWaiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default: // one pending wake-up covers any number of events
	}
}

// sharedReadTimeout bounds a read that several streams share, which no
// one stream's context may cut short.
const sharedReadTimeout = 5 * time.Second

// readEvents reads the events of job after cursor after for a stream. A
// notice wakes every stream of its job at once, and those that were
// caught up ask for the same thing: one read answers them all (the
// events are shared, read-only), so a job with 500 open streams costs one
// Redis read per event, not 500.
func (h *streamHub) readEvents(ctx context.Context, job, after string) ([]store.Event, error) {
	ch := h.shared.DoChan(job+" "+after, func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedReadTimeout)
		defer cancel()
		var events []store.Event
		err := h.read(rctx, func() (err error) {
			events, err = h.events.ReadEvents(rctx, job, after, 0)
			return err
		})
		return events, err
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]store.Event), nil
	}
}

// read runs one store read of a stream within the read slots.
func (h *streamHub) read(ctx context.Context, fn func() error) error {
	select {
	case h.reads <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-h.reads }()
	return fn()
}

// checkKeys ends the streams of revoked keys, every keyCheckInterval.
func (h *streamHub) checkKeys(ctx context.Context) {
	t := time.NewTicker(keyCheckInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := h.endRevoked(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			h.log.Warn("api: event streams: cannot check their keys for revocation", "err", err)
		case err == nil && failing:
			h.log.Info("api: event streams: key revocation checks work again")
		}
		failing = err != nil
	}
}

// endRevoked checks the keys of the open streams in one round trip and
// ends the streams of those no longer live. The open mode's anonymous
// caller has no key to revoke.
func (h *streamHub) endRevoked(ctx context.Context) error {
	h.mu.Lock()
	keys := make([]string, 0, len(h.byKey))
	for k := range h.byKey {
		if k != anonymousOwner {
			keys = append(keys, k)
		}
	}
	h.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, keyCheckTimeout)
	defer cancel()
	live, err := h.st.ActiveKeys(cctx, keys)
	if err != nil {
		return fmt.Errorf("api: check stream keys: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		if live[k] {
			continue
		}
		n := 0
		for w := range h.byKey[k] {
			if !w.revoked {
				w.revoked = true
				w.end(errKeyRevoked)
				n++
			}
		}
		if n > 0 {
			h.log.Info("api: event streams closed: their API key was revoked", "key", k, "streams", n)
		}
	}
	return nil
}

func addWaiter(m map[string]map[*streamWaiter]struct{}, k string, w *streamWaiter) {
	if m[k] == nil {
		m[k] = map[*streamWaiter]struct{}{}
	}
	m[k][w] = struct{}{}
}

func removeWaiter(m map[string]map[*streamWaiter]struct{}, k string, w *streamWaiter) {
	delete(m[k], w)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}
