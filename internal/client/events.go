package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// ErrStreamIdle is returned by EventStream.Next when nothing, not even a
// heartbeat, arrived within the idle timeout: the connection is presumed
// dead although TCP has not noticed.
var ErrStreamIdle = errors.New("the event stream went silent")

// maxEventLine bounds one line of the stream; the server's events are a
// few hundred bytes.
const maxEventLine = 1 << 20

// Event is one Server-Sent Event of a job's stream.
type Event struct {
	ID   string
	Type string
	Data []byte
}

// EventStream reads a job's text/event-stream.
type EventStream struct {
	body    io.ReadCloser
	lines   *bufio.Scanner
	cancel  context.CancelFunc
	idle    *time.Timer
	timeout time.Duration
	expired atomic.Bool
}

// Events opens GET /v1/jobs/{id}/events, resuming after event lastID when
// it is not empty. The stream is cut when it stays silent for the
// client's IdleTimeout.
func (c *Client) Events(ctx context.Context, id, lastID string) (*EventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := c.request(ctx, http.MethodGet, jobPath(id)+"/events", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	s := &EventStream{cancel: cancel, timeout: c.idleTimeout()}
	// The timer covers the wait for headers too: a proxy that holds the
	// request must not hang the client.
	s.idle = time.AfterFunc(s.timeout, func() { s.expired.Store(true); cancel() })
	resp, err := c.send(req)
	if err != nil {
		s.stop()
		return nil, s.wrap(err)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		s.stop()
		return nil, fmt.Errorf("GET %s: answer is %q, not an event stream", req.URL.Path, mt)
	}
	s.body = resp.Body
	s.lines = bufio.NewScanner(resp.Body)
	s.lines.Buffer(make([]byte, 4096), maxEventLine)
	return s, nil
}

func (c *Client) idleTimeout() time.Duration {
	if c.IdleTimeout > 0 {
		return c.IdleTimeout
	}
	return 45 * time.Second
}

// Next returns the next event. Comments (heartbeats) are skipped but
// keep the stream alive. At the end of the stream it returns io.EOF.
func (s *EventStream) Next() (Event, error) {
	var ev Event
	var data []string
	seen := false
	for s.lines.Scan() {
		s.idle.Reset(s.timeout)
		line := strings.TrimSuffix(s.lines.Text(), "\r")
		if line == "" {
			if seen {
				ev.Data = []byte(strings.Join(data, "\n"))
				if ev.Type == "" {
					ev.Type = "message"
				}
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment: a heartbeat
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID, seen = value, true
		case "event":
			ev.Type, seen = value, true
		case "data":
			data, seen = append(data, value), true
		}
	}
	if err := s.lines.Err(); err != nil {
		return Event{}, s.wrap(fmt.Errorf("reading the event stream: %w", err))
	}
	return Event{}, io.EOF // an event not ended by a blank line is dropped, as the SSE spec says
}

// wrap names an idle cut as such rather than as the context error it
// surfaces as.
func (s *EventStream) wrap(err error) error {
	if s.expired.Load() {
		return fmt.Errorf("%w for %s: %w", ErrStreamIdle, s.timeout, err)
	}
	return err
}

func (s *EventStream) stop() {
	s.idle.Stop()
	s.cancel()
}

// Close ends the stream.
func (s *EventStream) Close() error {
	s.stop()
	return s.body.Close()
}
