package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// readSSE reads an event stream to its end and returns its lines.
func readSSE(t *testing.T, env *testEnv, path, lastID string) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, env.url+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET %s = %d %s, want 200 text/event-stream", path, resp.StatusCode, ct)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("GET %s: stream did not end cleanly: %v", path, err)
	}
	return lines
}

func event(id, typ string) store.Event {
	data, _ := json.Marshal(map[string]string{"id": id})
	return store.Event{ID: id, Type: typ, Data: data, Time: time.Now()}
}

func TestEventsReplayAndEnd(t *testing.T) {
	// Heartbeats every 10 ms and the last event 300 ms later: several
	// heartbeats even when the request is slow to reach the handler.
	env := newTestEnv(t, func(c *Config) { c.Heartbeat = 10 * time.Millisecond })
	seedJob(env, "j", job.StatusRunning)
	env.store.addEvent("j", event("1-0", "job.started"))
	env.store.addEvent("j", event("2-0", "run.finished"))
	go func() {
		time.Sleep(300 * time.Millisecond)
		env.store.addEvent("j", event("3-0", "job.finished"))
		env.store.addEvent("j", event("4-0", "never.sent"))
	}()
	lines := readSSE(t, env, "/v1/jobs/j/events", "")
	got := strings.Join(lines, "\n")
	for _, want := range []string{"id: 1-0\nevent: job.started\ndata: {\"id\":\"1-0\"}", "id: 2-0", "id: 3-0\nevent: job.finished", ": heartbeat"} {
		if !strings.Contains(got, want) {
			t.Errorf("event stream lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "never.sent") {
		t.Errorf("event stream went on after job.finished:\n%s", got)
	}

	lines = readSSE(t, env, "/v1/jobs/j/events", "2-0")
	if got := strings.Join(lines, "\n"); strings.Contains(got, "id: 1-0") || !strings.Contains(got, "id: 3-0") {
		t.Errorf("resumed after 2-0 = \n%s\nwant only events after 2-0", got)
	}
}

func TestEventsEndForFinishedJobWithoutFinalEvent(t *testing.T) {
	env := newTestEnv(t, nil)
	seedJob(env, "old", job.StatusSucceeded) // its events expired
	done := make(chan []string)
	go func() { done <- readSSE(t, env, "/v1/jobs/old/events", "") }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("stream of a finished job with no events did not end")
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	env := newTestEnv(t, func(c *Config) { c.Heartbeat = time.Hour; c.EventPoll = time.Hour })
	seedJob(env, "j", job.StatusRunning)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, env.url+"/v1/jobs/j/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET events = %d, want 200", resp.StatusCode)
	}
	// The headers arrived, so the handler is inside its stream loop; prove
	// the stream stays open on its own before shutting down, or the test
	// would pass against a stream that ended by itself.
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); ended <- err }()
	select {
	case err := <-ended:
		t.Fatalf("stream ended before Shutdown: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := env.srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("stream did not end cleanly: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Shutdown left an event stream open")
	}
}

// TestEventsDescribed: the served OpenAPI description of the event stream
// names every event a stream carries, from the one table of event names.
func TestEventsDescribed(t *testing.T) {
	env := newTestEnv(t, nil)
	resp, body := env.do(t, http.MethodGet, "/openapi.json", "")
	var doc struct {
		Paths map[string]map[string]struct {
			Description string `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.json = %d: %v", resp.StatusCode, err)
	}
	desc := doc.Paths["/v1/jobs/{id}/events"]["get"].Description
	for _, ev := range append(job.StreamEvents(), job.EventFinished) {
		if !strings.Contains(desc, ev+" (") {
			t.Errorf("the events' description does not describe %s: %q", ev, desc)
		}
	}
}
