package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// handleJobEvents streams a job's progress as Server-Sent Events.
//
//	@Summary		Stream a job's events
//	@Description	text/event-stream of the job's events, replayed from Last-Event-ID or from the start, then live. Each event's data is one JSON object; the types, in the order a run first writes them: job.started (the job began: status); progress (the job's progress: runs done and total, the current run, its requests done and req/s; a few a second); run.intervals (intervals of the current run's timeline as they close, a few at a time: point, repeat, target, concurrency, for a sharded run the shard whose intervals they are, and intervals, each as the results' timeline intervals give it: counts, rates and latency percentiles); run.finished (a run stored: point, repeat, target, concurrency, complete_requests, failed_requests, requests_per_second); job.finished (always the last event: status, verdict, error, runs_done). A comment line is sent every 15 s to keep proxies from closing the stream. The stream ends after the job's final event, and within a second of its API key's revocation. Open streams are capped per API key and per server (429 with Retry-After beyond either).
//	@Tags			jobs
//	@Produce		text/event-stream
//	@Param			id				path		string	true	"job id"
//	@Param			Last-Event-ID	header		string	false	"resume after this event id"
//	@Success		200				{string}	string	"event stream"
//	@Failure		404				{object}	Problem
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		429	{object}	Problem	"too-many-streams: the key or the server has as many event streams open as allowed; retry after the Retry-After header"
//	@Header			429	{integer}	Retry-After	"seconds"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/events [get]
func (s *Server) handleJobEvents(c echo.Context) error {
	ctx, cancel := context.WithCancelCause(c.Request().Context())
	defer cancel(nil)
	defer context.AfterFunc(s.closing, func() { cancel(nil) })()
	c.SetRequest(c.Request().WithContext(ctx))
	id := c.Param("id")
	p := principalOf(c)
	if _, err := p.Job(ctx, s.store, id); err != nil {
		return err
	}
	w, err := s.streams.admit(p.KeyID, id, cancel)
	if err != nil {
		return err
	}
	defer s.streams.release(w)
	after := c.Request().Header.Get("Last-Event-ID")
	if after == "" {
		after = c.QueryParam("after")
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Response().WriteHeader(http.StatusOK)
	st := &stream{s: s, c: c, rc: http.NewResponseController(c.Response()), w: w, jobID: id, after: after}
	err = st.run()
	// A revoked key's streams are logged once, by the hub.
	if err != nil && ctx.Err() == nil {
		s.log.Warn("api: event stream ended", "request_id", requestID(c), "job", id, "err", err)
	}
	return nil
}

// stream is one client's event stream.
type stream struct {
	s     *Server
	c     echo.Context
	rc    *http.ResponseController
	w     *streamWaiter
	jobID string
	after string
}

// run replays and follows the job's events until its final event, the
// client going away, or a store error. Between reads it holds no Redis
// connection: it reads when the hub wakes it for a notice, and every
// EventPoll in case a notice was lost (or the job ended without its final
// event).
func (st *stream) run() error {
	ctx := st.c.Request().Context()
	if err := st.flush(); err != nil {
		return err
	}
	poll := time.NewTicker(st.s.cfg.EventPoll)
	defer poll.Stop()
	heartbeat := time.NewTicker(st.s.cfg.Heartbeat)
	defer heartbeat.Stop()
	for {
		done, full, err := st.readNext(ctx)
		if done || err != nil {
			return err
		}
		if full {
			continue // a whole batch: more may be waiting
		}
		select {
		case <-ctx.Done():
			return nil
		case <-st.w.wake:
		case <-heartbeat.C:
			if err := st.send([]byte(": heartbeat\n\n")); err != nil {
				return err
			}
		case <-poll.C:
			terminal, err := st.jobTerminal(ctx)
			if err != nil {
				return err
			}
			if terminal {
				// One more read drains the tail, then the stream ends.
				_, _, err := st.readNext(ctx)
				return err
			}
		}
	}
}

// readNext reads and sends the events after st.after without waiting;
// done is true after the final event, full when a whole batch came.
func (st *stream) readNext(ctx context.Context) (done, full bool, err error) {
	events, err := st.s.streams.readEvents(ctx, st.jobID, st.after)
	if err != nil {
		if ctx.Err() != nil {
			return true, false, nil
		}
		return true, false, fmt.Errorf("read events: %w", err)
	}
	done, err = st.write(events)
	return done, len(events) >= store.ReadBatch, err
}

// write sends events; done is true after the final one.
func (st *stream) write(events []store.Event) (done bool, err error) {
	if len(events) == 0 {
		return false, nil
	}
	var b bytes.Buffer
	for _, ev := range events {
		fmt.Fprintf(&b, "id: %s\nevent: %s\n", ev.ID, ev.Type)
		for _, line := range bytes.Split(ev.Data, []byte("\n")) {
			fmt.Fprintf(&b, "data: %s\n", line)
		}
		b.WriteString("\n")
		st.after = ev.ID
		if job.IsFinalEvent(ev.Type) {
			done = true
			break
		}
	}
	if err := st.send(b.Bytes()); err != nil {
		return true, err
	}
	return done, nil
}

// jobTerminal covers a final event that expired or was never written: a
// finished job's stream must end anyway.
func (st *stream) jobTerminal(ctx context.Context) (bool, error) {
	var j *job.Job
	err := st.s.streams.read(ctx, func() (err error) {
		j, err = st.s.store.GetJob(ctx, st.jobID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("get job: %w", err)
	}
	return j.Status.Terminal(), nil
}

// send writes and flushes with a fresh write deadline: the server's write
// timeout would otherwise cut every stream after WriteTimeout.
func (st *stream) send(p []byte) error {
	if err := st.rc.SetWriteDeadline(time.Now().Add(st.s.cfg.WriteTimeout)); err != nil {
		return fmt.Errorf("set write deadline: %w", err)
	}
	if _, err := st.c.Response().Write(p); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return st.flush()
}

func (st *stream) flush() error {
	if err := st.rc.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}
