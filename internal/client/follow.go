package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// Update is the state of a job as Follow last heard it.
type Update struct {
	Status   job.Status
	Progress job.Progress
}

// Follow watches job id until it reaches a terminal status and returns it
// as GET /v1/jobs/{id} then shows it. It reports each change to onUpdate
// (which may be nil). It reads the event stream, resuming after the last
// event it saw when the stream drops, after a pause with jitter that
// grows while drops repeat (so clients cut off together do not all come
// back at once). A stream refused with 429 (the server's cap on open
// streams) is tried again after the answer's Retry-After, or the backoff
// when longer, without polling meanwhile. While no stream can be opened
// otherwise it polls the job every PollInterval and tries the stream with
// each poll, then, after maxStreamFailures in a row, with every
// streamRetryPolls-th poll (every 10 s by default). It gives up after
// MaxFailures calls in a row failed, on any other 4xx answer, and when
// ctx ends.
func (c *Client) Follow(ctx context.Context, id string, onUpdate func(Update)) (Job, error) {
	f := &follower{c: c, id: id, onUpdate: onUpdate, retry: backoff{base: c.pollInterval(), max: maxStreamBackoff}}
	if f.onUpdate == nil {
		f.onUpdate = func(Update) {}
	}
	return f.run(ctx)
}

// follower is one Follow call's state.
type follower struct {
	c        *Client
	id       string
	onUpdate func(Update)
	lastID   string // the last event seen, to resume after
	status   job.Status
	failures int     // calls in a row that failed
	retry    backoff // the pause before reopening a refused or dropped stream
}

func (f *follower) run(ctx context.Context) (Job, error) {
	streamFailures := 0 // capped at maxStreamFailures: then only polls
	polls := 0          // polls since the stream was last tried
	for {
		pause := f.c.pollInterval()
		if streamFailures < maxStreamFailures || polls >= streamRetryPolls {
			polls = 0
			r := f.stream(ctx)
			if ctx.Err() != nil {
				return Job{}, ctx.Err()
			}
			switch {
			case r.refused != nil:
				// Busy, not broken: the stream is tried again, not polled for.
				pause = f.retry.next(r.refused.RetryAfter)
			case r.opened:
				if r.got {
					f.retry.reset()
					streamFailures = 0
				} else if streamFailures < maxStreamFailures {
					streamFailures++
				}
				pause = f.retry.next(0)
			case streamFailures < maxStreamFailures:
				streamFailures++
			}
		}
		// Ask the job itself: after the final event for its status, after
		// a drop to learn whether it finished meanwhile, and as the poll
		// when there is no stream.
		j, err := f.c.Job(ctx, f.id)
		if ctx.Err() != nil {
			return Job{}, ctx.Err()
		}
		if err := f.failed(err); err != nil {
			return Job{}, err
		}
		if err == nil {
			if j.Status.Terminal() {
				return j, nil
			}
			f.status = j.Status
			f.onUpdate(Update{Status: j.Status, Progress: j.Progress})
		}
		if streamFailures >= maxStreamFailures {
			polls++
		}
		if err := sleep(ctx, pause); err != nil {
			return Job{}, err
		}
	}
}

// maxStreamFailures is how many streams in a row may fail to deliver a
// single event before Follow only polls: a proxy that buffers or refuses
// event streams must not cost a reconnect every poll.
const maxStreamFailures = 3

// streamRetryPolls is how many polls Follow makes between two attempts at
// the stream once it only polls (every 10 s at the default PollInterval):
// a stream that was down for a restart or a proxy reload comes back, and
// a proxy that never passes one costs a single request per 10 polls.
const streamRetryPolls = 10

// maxStreamBackoff bounds the pause before reopening a stream, the
// server's Retry-After included.
const maxStreamBackoff = 30 * time.Second

// failed counts a failed GET and returns the error that ends Follow: a
// 4xx at once, anything else after MaxFailures in a row.
func (f *follower) failed(err error) error {
	if err == nil {
		f.failures = 0
		return nil
	}
	var ae *APIError
	if errors.As(err, &ae) && !ae.Temporary() {
		return err
	}
	f.failures++
	if f.failures >= f.c.maxFailures() {
		return fmt.Errorf("%d calls in a row on job %s failed, the last: %w", f.failures, f.id, err)
	}
	return nil
}

// streamResult is how one stream attempt went.
type streamResult struct {
	opened  bool      // the server answered with an event stream
	got     bool      // it delivered at least one event
	final   bool      // the last of them was the job's final event
	refused *APIError // a 429: the server has too many streams open
}

// stream reads events until the final one or until the stream ends or
// fails. Why else a stream failed does not matter: the GET that follows
// tells a job that is gone from a stream that is.
func (f *follower) stream(ctx context.Context) streamResult {
	s, err := f.c.Events(ctx, f.id, f.lastID)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests {
			return streamResult{refused: ae}
		}
		return streamResult{}
	}
	defer s.Close()
	r := streamResult{opened: true}
	for {
		ev, err := s.Next()
		if err != nil {
			return r
		}
		r.got = true
		if ev.ID != "" {
			f.lastID = ev.ID
		}
		if job.IsFinalEvent(ev.Type) {
			r.final = true
			return r
		}
		f.apply(ev)
	}
}

// apply turns an event into an update. An event whose data does not
// decode is skipped: progress is advisory and the final status comes
// from GET.
func (f *follower) apply(ev Event) {
	switch ev.Type {
	case job.EventStarted:
		var d struct {
			Status job.Status `json:"status"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Status != "" {
			f.status = d.Status
		}
	case job.EventProgress:
		var p job.Progress
		if json.Unmarshal(ev.Data, &p) != nil {
			return
		}
		if f.status == "" || f.status == job.StatusQueued {
			f.status = job.StatusRunning // progress is only written while running
		}
		f.onUpdate(Update{Status: f.status, Progress: p})
	}
}

func (c *Client) pollInterval() time.Duration {
	if c.PollInterval > 0 {
		return c.PollInterval
	}
	return time.Second
}

func (c *Client) maxFailures() int {
	if c.MaxFailures > 0 {
		return c.MaxFailures
	}
	return 5
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
