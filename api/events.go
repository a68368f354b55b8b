package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/store"
)

// isFinalEvent reports whether no event follows this one in a job's stream.
func isFinalEvent(typ string) bool {
	switch typ {
	case "job.finished", "job.succeeded", "job.failed", "job.canceled":
		return true
	}
	return false
}

// handleJobEvents streams a job's progress as Server-Sent Events.
//
//	@Summary		Stream a job's events
//	@Description	text/event-stream of the job's events (status changes, progress, runs), replayed from Last-Event-ID or from the start, then live. A comment line is sent every 15 s to keep proxies from closing the stream. The stream ends after the job's final event.
//	@Tags			jobs
//	@Produce		text/event-stream
//	@Param			id				path		string	true	"job id"
//	@Param			Last-Event-ID	header		string	false	"resume after this event id"
//	@Success		200				{string}	string	"event stream"
//	@Failure		404				{object}	Problem
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/events [get]
func (s *Server) handleJobEvents(c echo.Context) error {
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	c.SetRequest(c.Request().WithContext(ctx))
	id := c.Param("id")
	if _, err := s.ownedJobCtx(ctx, principalOf(c), id); err != nil {
		return err
	}
	after := c.Request().Header.Get("Last-Event-ID")
	if after == "" {
		after = c.QueryParam("after")
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	c.Response().WriteHeader(http.StatusOK)
	st := &stream{s: s, c: c, rc: http.NewResponseController(c.Response()), jobID: id, after: after}
	if err := st.run(); err != nil && ctx.Err() == nil {
		s.log.Warn("api: event stream ended", "request_id", requestID(c), "job", id, "err", err)
	}
	return nil
}

// stream is one client's event stream.
type stream struct {
	s      *Server
	c      echo.Context
	rc     *http.ResponseController
	jobID  string
	after  string
	lastHB time.Time
}

// run replays and follows the job's events until its final event, the
// client going away, or a store error.
func (st *stream) run() error {
	ctx := st.c.Request().Context()
	st.lastHB = time.Now()
	if err := st.flush(); err != nil {
		return err
	}
	finishing := false // the job is terminal: one more read drains the tail
	for ctx.Err() == nil {
		block := min(st.s.cfg.EventPoll, st.s.cfg.Heartbeat)
		events, err := st.s.store.ReadEvents(ctx, st.jobID, st.after, block)
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		done, err := st.write(events)
		if done || err != nil {
			return err
		}
		if len(events) > 0 {
			continue
		}
		if finishing {
			return nil
		}
		if finishing, err = st.jobTerminal(); err != nil {
			return err
		}
		if err := st.heartbeat(); err != nil {
			return err
		}
	}
	return nil
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
		if isFinalEvent(ev.Type) {
			done = true
			break
		}
	}
	if err := st.send(b.Bytes()); err != nil {
		return true, err
	}
	return done, nil
}

func (st *stream) heartbeat() error {
	if time.Since(st.lastHB) < st.s.cfg.Heartbeat {
		return nil
	}
	st.lastHB = time.Now()
	return st.send([]byte(": heartbeat\n\n"))
}

// jobTerminal covers a final event that expired or was never written: a
// finished job's stream must end anyway.
func (st *stream) jobTerminal() (bool, error) {
	j, err := st.s.store.GetJob(st.c.Request().Context(), st.jobID)
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
