package client

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEventStreamParses(t *testing.T) {
	const body = ": heartbeat\n\n" +
		"id: 1-0\nevent: job.started\ndata: {\"status\":\"running\"}\n\n" +
		"id: 2-0\r\nevent: progress\r\ndata: {\"a\":1,\r\ndata: \"b\":2}\r\n\r\n" +
		"data:no space\n\n" +
		"id: 3-0\nevent: cut\ndata: never ended"
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "0-1" || r.URL.Path != "/v1/jobs/j1/events" {
			t.Errorf("request %s with Last-Event-ID %q", r.URL.Path, r.Header.Get("Last-Event-ID"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	s, err := c.Events(t.Context(), "j1", "0-1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := []Event{
		{ID: "1-0", Type: "job.started", Data: []byte(`{"status":"running"}`)},
		{ID: "2-0", Type: "progress", Data: []byte("{\"a\":1,\n\"b\":2}")},
		{Type: "message", Data: []byte("no space")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestEventStreamRefusesOtherContent(t *testing.T) {
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	if _, err := c.Events(t.Context(), "j1", ""); err == nil {
		t.Fatal("Events on a JSON answer = nil error, want one")
	}
}

// TestEventStreamIdle: a stream that sends headers and then nothing, not
// even a heartbeat, is cut after IdleTimeout.
func TestEventStreamIdle(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	c.IdleTimeout = 100 * time.Millisecond
	s, err := c.Events(t.Context(), "j1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	_, err = s.Next()
	if !errors.Is(err, ErrStreamIdle) {
		t.Fatalf("Next on a silent stream = %v, want ErrStreamIdle", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("idle cut took %s, want about 100ms", d)
	}
}
