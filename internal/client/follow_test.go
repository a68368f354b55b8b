package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// fakeServer serves /v1/jobs/j1 and its event stream from scripts the
// test writes: each GET of the job answers the next status, each stream
// connection runs the next stream function.
type fakeServer struct {
	mu       sync.Mutex
	statuses []string // GET answers in turn; the last repeats
	gets     int
	streams  []func(w http.ResponseWriter, r *http.Request)
	lastIDs  []string // Last-Event-ID of each stream connection
	getsAt   []int    // GETs of the job before each stream connection
	openedAt []time.Time
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	switch r.URL.Path {
	case "/v1/jobs/j1":
		st := f.statuses[min(f.gets, len(f.statuses)-1)]
		f.gets++
		f.mu.Unlock()
		if st == "404" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"title":"Not found","status":404}`)
			return
		}
		fmt.Fprintf(w, `{"id":"j1","status":%q,"progress":{"runs_total":4,"runs_done":%d},"verdict":"pass"}`, st, f.gets)
	case "/v1/jobs/j1/events":
		f.lastIDs = append(f.lastIDs, r.Header.Get("Last-Event-ID"))
		f.getsAt = append(f.getsAt, f.gets)
		f.openedAt = append(f.openedAt, time.Now())
		var fn func(http.ResponseWriter, *http.Request)
		if n := len(f.lastIDs) - 1; n < len(f.streams) {
			fn = f.streams[n]
		}
		f.mu.Unlock()
		if fn == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fn(w, r)
	default:
		f.mu.Unlock()
		http.NotFound(w, r)
	}
}

func sse(events ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for _, e := range events {
			io.WriteString(w, e)
		}
	}
}

func progress(id string, done int) string {
	return fmt.Sprintf("id: %s\nevent: progress\ndata: {\"runs_total\":4,\"runs_done\":%d,\"requests_done\":10,\"current_rps\":100}\n\n", id, done)
}

func follow(t *testing.T, f *fakeServer) (Job, []Update, error) {
	t.Helper()
	c := newTestClient(t, f)
	c.PollInterval = 10 * time.Millisecond
	var updates []Update
	j, err := c.Follow(t.Context(), "j1", func(u Update) { updates = append(updates, u) })
	return j, updates, err
}

// TestFollowResumesAfterDrop: the first stream drops after two events;
// the second must resume after the last one seen and deliver the rest.
func TestFollowResumesAfterDrop(t *testing.T) {
	f := &fakeServer{
		statuses: []string{"running", "succeeded"},
		streams: []func(http.ResponseWriter, *http.Request){
			sse("id: 1-0\nevent: job.started\ndata: {\"status\":\"running\"}\n\n", progress("2-0", 1)),
			sse(": heartbeat\n\n", progress("3-0", 3), "id: 4-0\nevent: job.finished\ndata: {\"status\":\"succeeded\"}\n\n"),
		},
	}
	j, updates, err := follow(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.StatusSucceeded || j.Verdict != "pass" {
		t.Errorf("Follow = %s %s, want succeeded pass", j.Status, j.Verdict)
	}
	if want := []string{"", "2-0"}; fmt.Sprint(f.lastIDs) != fmt.Sprint(want) {
		t.Errorf("Last-Event-ID of the streams = %q, want %q", f.lastIDs, want)
	}
	var done []int
	for _, u := range updates {
		done = append(done, u.Progress.RunsDone)
		if u.Status != job.StatusRunning {
			t.Errorf("update status %q, want running", u.Status)
		}
	}
	// 1 from the first stream, 1 from the GET after the drop, 3 from the second stream.
	if fmt.Sprint(done) != "[1 1 3]" {
		t.Errorf("runs done of the updates = %v, want [1 1 3]", done)
	}
}

// TestFollowPollsWithoutStream: the stream is refused every time; Follow
// polls the job until it ends and stops trying the stream.
func TestFollowPollsWithoutStream(t *testing.T) {
	f := &fakeServer{statuses: []string{"queued", "running", "running", "running", "running", "canceled"}}
	j, updates, err := follow(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.StatusCanceled {
		t.Errorf("Follow = %s, want canceled", j.Status)
	}
	if len(updates) != 5 || updates[0].Status != job.StatusQueued || updates[4].Status != job.StatusRunning {
		t.Errorf("updates = %+v, want 5 polls: queued, then running", updates)
	}
	if len(f.lastIDs) != maxStreamFailures {
		t.Errorf("stream tried %d times, want %d", len(f.lastIDs), maxStreamFailures)
	}
}

// TestFollowRetriesStream: after maxStreamFailures refused streams Follow
// polls, yet tries the stream again every streamRetryPolls polls, and
// uses it once it comes back.
func TestFollowRetriesStream(t *testing.T) {
	down := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }
	var streams []func(http.ResponseWriter, *http.Request)
	for range maxStreamFailures + 1 { // the first retry fails too
		streams = append(streams, down)
	}
	streams = append(streams, sse(progress("7-0", 3), "id: 8-0\nevent: job.finished\ndata: {\"status\":\"succeeded\"}\n\n"))
	// GETs: one after each of the failed streams, streamRetryPolls-1 more
	// before the first retry and streamRetryPolls-1 before the second;
	// the GET after the final event sees the job done.
	gets := maxStreamFailures + 2*(streamRetryPolls-1) + 1
	statuses := make([]string, gets+1)
	for i := range statuses {
		statuses[i] = "running"
	}
	statuses[gets] = "succeeded"
	f := &fakeServer{statuses: statuses, streams: streams}
	j, updates, err := follow(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.StatusSucceeded {
		t.Errorf("Follow = %s, want succeeded", j.Status)
	}
	first := maxStreamFailures - 1 + streamRetryPolls
	want := []int{0, 1, 2, first, first + streamRetryPolls}
	if fmt.Sprint(f.getsAt) != fmt.Sprint(want) {
		t.Errorf("GETs before each stream = %v, want %v", f.getsAt, want)
	}
	if f.gets != gets+1 {
		t.Errorf("GETs = %d, want %d: the final event ends the wait", f.gets, gets+1)
	}
	streamed := false
	for _, u := range updates {
		if u.Progress.RunsDone == 3 && u.Progress.CurrentRPS == 100 {
			streamed = true
		}
	}
	if !streamed {
		t.Errorf("%d updates, none from the stream that came back", len(updates))
	}
}

// TestFollowWaitsOutRefusedStream: a stream drops after two events, the
// next is refused with 429 and Retry-After: 1; Follow must wait at least
// that long without polling the job meanwhile, then resume after the
// last event it saw.
func TestFollowWaitsOutRefusedStream(t *testing.T) {
	busy := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"title":"Too many event streams","status":429}`)
	}
	f := &fakeServer{
		statuses: []string{"running", "running", "running", "succeeded"},
		streams: []func(http.ResponseWriter, *http.Request){
			sse("id: 1-0\nevent: job.started\ndata: {\"status\":\"running\"}\n\n", progress("2-0", 1)),
			busy,
			busy,
			sse(progress("3-0", 3), "id: 4-0\nevent: job.finished\ndata: {\"status\":\"succeeded\"}\n\n"),
		},
	}
	j, _, err := follow(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.StatusSucceeded {
		t.Errorf("Follow = %s, want succeeded", j.Status)
	}
	if want := []string{"", "2-0", "2-0", "2-0"}; fmt.Sprint(f.lastIDs) != fmt.Sprint(want) {
		t.Errorf("Last-Event-ID of the streams = %q, want %q", f.lastIDs, want)
	}
	// One GET after each attempt, none in between: refused streams are
	// waited out, not replaced by polling.
	if want := []int{0, 1, 2, 3}; fmt.Sprint(f.getsAt) != fmt.Sprint(want) {
		t.Errorf("GETs before each stream = %v, want %v", f.getsAt, want)
	}
	for i := 2; i < len(f.openedAt); i++ {
		if gap := f.openedAt[i].Sub(f.openedAt[i-1]); gap < time.Second {
			t.Errorf("stream %d opened %s after a 429 with Retry-After: 1, want at least 1s", i+1, gap)
		}
	}
}

func TestBackoffGrowsWithJitterWithinBounds(t *testing.T) {
	b := backoff{base: 100 * time.Millisecond, max: time.Second}
	for i, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		if d := b.next(0); d < want/2 || d > want {
			t.Errorf("attempt %d: pause %s, want within [%s, %s]", i+1, d, want/2, want)
		}
	}
	b.reset()
	if d := b.next(300 * time.Millisecond); d < 300*time.Millisecond || d > 360*time.Millisecond {
		t.Errorf("pause with Retry-After 300ms = %s, want within [300ms, 360ms]", d)
	}
	if d := b.next(time.Hour); d != time.Second {
		t.Errorf("pause with Retry-After 1h = %s, want the 1s bound", d)
	}
}

func TestFollowGivesUp(t *testing.T) {
	t.Run("job gone", func(t *testing.T) {
		_, _, err := follow(t, &fakeServer{statuses: []string{"404"}})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Follow of a missing job = %v, want ErrNotFound", err)
		}
	})
	t.Run("server gone", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, _ := New("http://"+addr, "")
		c.PollInterval, c.MaxFailures = time.Millisecond, 3
		_, err = c.Follow(t.Context(), "j1", nil)
		var ae *APIError
		if err == nil || errors.As(err, &ae) {
			t.Errorf("Follow against a closed port = %v, want a connection error after 3 tries", err)
		}
	})
	t.Run("caller stops", func(t *testing.T) {
		f := &fakeServer{statuses: []string{"running"}}
		c := newTestClient(t, f)
		c.PollInterval = time.Millisecond
		ctx, cancel := context.WithCancel(t.Context())
		_, err := c.Follow(ctx, "j1", func(Update) { cancel() })
		if err == nil {
			t.Error("Follow after cancel = nil error, want the context's")
		}
	})
}
