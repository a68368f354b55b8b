package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
)

// streamEnv is the API on a real Redis, with its event streams wired to
// the store's notices and key checks as cmd wires them. Its Redis pool
// is small and quick to give up, so a stream that held a pooled
// connection would starve the other requests visibly.
type streamEnv struct {
	*keyEnv
}

const (
	streamPoolSize    = 4
	streamPoolTimeout = 300 * time.Millisecond
)

func newStreamEnv(t *testing.T, tune func(*Config)) *streamEnv {
	t.Helper()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: streamPoolSize, PoolTimeout: streamPoolTimeout})
	t.Cleanup(func() { rdb.Close() })
	st := store.New(rdb, store.Options{})
	env := &keyEnv{store: st, queue: &jobtest.Queue{}}
	cfg := Config{CheckURL: testservers.LoopbackOnly, Heartbeat: time.Hour}
	if tune != nil {
		tune(&cfg)
	}
	env.srv = New(cfg, Deps{Store: st, Queue: env.queue, Keys: st, Quotas: st, Streams: st})
	hs := httptest.NewServer(env.srv.Handler())
	t.Cleanup(func() {
		hs.CloseClientConnections()
		if err := env.srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		hs.Close()
	})
	env.url = hs.URL
	return &streamEnv{env}
}

// openStream opens job id's event stream with key and returns the
// response, its body left open (closed at the test's end).
func (e *streamEnv) openStream(t *testing.T, key, id string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.url+"/v1/jobs/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET events: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// mustStream opens a stream and fails unless it is one.
func (e *streamEnv) mustStream(t *testing.T, key, id string) *http.Response {
	t.Helper()
	resp := e.openStream(t, key, id)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET events = %d %s, want 200", resp.StatusCode, b)
	}
	return resp
}

// wantTooMany checks a refused stream: 429 problem+json naming the
// limit, with Retry-After.
func wantTooMany(t *testing.T, resp *http.Response, limit int) {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("stream over the cap = %d, want 429", resp.StatusCode) // a 200's body never ends
	}
	b, _ := io.ReadAll(resp.Body)
	p := problem(t, resp, b)
	if p.Type != problemBase+"too-many-streams" || p.Limit != limit {
		t.Errorf("problem = %+v, want too-many-streams with limit %d", p, limit)
	}
	if resp.Header.Get("Retry-After") != "5" {
		t.Errorf("Retry-After = %q, want 5", resp.Header.Get("Retry-After"))
	}
}

func TestStreamsCappedPerKeyAndProcess(t *testing.T) {
	env := newStreamEnv(t, func(c *Config) { c.MaxStreamsPerKey, c.MaxStreams = 2, 3 })
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	_, b := env.addKey(t, "b", false, apikey.Quota{})
	ja, jb := env.create(t, a), env.create(t, b)

	first := env.mustStream(t, a, ja)
	env.mustStream(t, a, ja)
	wantTooMany(t, env.openStream(t, a, ja), 2) // a's cap
	env.mustStream(t, b, jb)
	wantTooMany(t, env.openStream(t, b, jb), 3) // the process's cap

	// A stream that ends gives its place back.
	first.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for env.srv.streams.count() > 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open after one closed, want 2", env.srv.streams.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	env.mustStream(t, b, jb)
}

// TestIdleStreamsLeaveThePoolToRequests: five times more open streams
// than the pool has connections; other requests and /readyz must still
// get one at once.
func TestIdleStreamsLeaveThePoolToRequests(t *testing.T) {
	env := newStreamEnv(t, nil)
	_, a := env.addKey(t, "streamer", false, apikey.Quota{})
	_, other := env.addKey(t, "other", false, apikey.Quota{})
	ja, jo := env.create(t, a), env.create(t, other)
	for range 5 * streamPoolSize {
		env.mustStream(t, a, ja)
	}
	for i := range 10 {
		if resp, b := env.do(t, http.MethodGet, "/v1/jobs/"+jo, other, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET job #%d with %d streams open = %d %s, want 200", i, 5*streamPoolSize, resp.StatusCode, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // past the readiness cache
	if resp, b := env.do(t, http.MethodGet, "/readyz", "", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz with %d streams open = %d %s, want 200", 5*streamPoolSize, resp.StatusCode, b)
	}
}

// TestStreamWakesOnNotice: with the fallback poll an hour away, an event
// reaches the open stream through the notice alone.
func TestStreamWakesOnNotice(t *testing.T) {
	env := newStreamEnv(t, func(c *Config) { c.EventPoll = time.Hour })
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	id := env.create(t, a)
	resp := env.mustStream(t, a, id)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The stream registered before its headers were sent; give the
	// subscription its first confirmation, then write.
	time.Sleep(200 * time.Millisecond)
	for i, typ := range []string{job.EventProgress, job.EventFinished} {
		if err := env.store.AppendEvent(t.Context(), id, typ, map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	timeout := time.After(3 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				if s := strings.Join(got, "\n"); !strings.Contains(s, "event: progress") || !strings.Contains(s, "event: job.finished") {
					t.Fatalf("stream ended with\n%s\nwant the progress and job.finished events", s)
				}
				return
			}
			got = append(got, l)
		case <-timeout:
			t.Fatalf("stream still open 3s after job.finished; got\n%s", strings.Join(got, "\n"))
		}
	}
}

// TestStreamClosedOnRevocation: revoking the key ends its open stream
// within a second; another key's stream stays open.
func TestStreamClosedOnRevocation(t *testing.T) {
	env := newStreamEnv(t, nil)
	idA, a := env.addKey(t, "a", false, apikey.Quota{})
	_, b := env.addKey(t, "b", false, apikey.Quota{})
	ja, jb := env.create(t, a), env.create(t, b)
	ended := func(resp *http.Response) <-chan struct{} {
		ch := make(chan struct{})
		go func() { io.Copy(io.Discard, resp.Body); close(ch) }()
		return ch
	}
	endA, endB := ended(env.mustStream(t, a, ja)), ended(env.mustStream(t, b, jb))
	revoked := time.Now()
	if _, err := env.store.RevokeKey(t.Context(), idA, revoked); err != nil {
		t.Fatal(err)
	}
	select {
	case <-endA:
		t.Logf("stream closed %s after the revocation", time.Since(revoked).Round(time.Millisecond))
	case <-time.After(time.Second):
		t.Fatal("the revoked key's stream was still open 1s after the revocation")
	}
	select {
	case <-endB:
		t.Fatal("another key's stream ended with the revocation")
	case <-time.After(300 * time.Millisecond):
	}
	resp := env.openStream(t, a, ja)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a new stream with the revoked key = %d, want 401", resp.StatusCode)
	}
	var p Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || !strings.Contains(p.Detail, "revoked") {
		t.Errorf("401 problem = %+v, %v; want it to say the key was revoked", p, err)
	}
}

// countingStore counts the event reads that reach the store.
type countingStore struct {
	*store.Store
	reads atomic.Int64
}

func (c *countingStore) ReadEvents(ctx context.Context, id, after string, block time.Duration) ([]store.Event, error) {
	c.reads.Add(1)
	return c.Store.ReadEvents(ctx, id, after, block)
}

// TestStreamsOfOneJobShareReads: one event to a job with 50 caught-up
// streams must cost far fewer than 50 reads, or a popular job's streams
// turn each event into a burst of Redis reads that other requests wait
// behind.
func TestStreamsOfOneJobShareReads(t *testing.T) {
	const streams = 50
	srv := redistest.Start(t)
	st := store.New(srv.Client(t), store.Options{})
	cs := &countingStore{Store: st}
	env := &keyEnv{store: st, queue: &jobtest.Queue{}}
	env.srv = New(Config{CheckURL: testservers.LoopbackOnly, Heartbeat: time.Hour, EventPoll: time.Hour, MaxStreamsPerKey: streams},
		Deps{Store: cs, Queue: env.queue, Keys: st, Quotas: st, Streams: st})
	hs := httptest.NewServer(env.srv.Handler())
	t.Cleanup(func() {
		hs.CloseClientConnections()
		_ = env.srv.Shutdown(context.Background())
		hs.Close()
	})
	env.url = hs.URL
	se := &streamEnv{env}
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	id := env.create(t, a)
	got := make(chan struct{}, streams)
	for range streams {
		resp := se.mustStream(t, a, id)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "event: progress") {
					got <- struct{}{}
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // every stream past its replay
	before := cs.reads.Load()
	if err := st.AppendEvent(t.Context(), id, job.EventProgress, map[string]int{"runs_done": 1}); err != nil {
		t.Fatal(err)
	}
	for i := range streams {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d streams got the event within 5s", i, streams)
		}
	}
	reads := cs.reads.Load() - before
	t.Logf("one event to %d streams took %d reads", streams, reads)
	if reads > streams/2 {
		t.Errorf("one event to %d streams took %d reads, want at most %d", streams, reads, streams/2)
	}
}
