package loadgen

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// Bounds of the warm-up: up to warmUpWorkers requests at once, each
// answered with a warmUpBody-byte body.
const (
	warmUpWorkers = 64
	warmUpBody    = 32 << 10
)

// warmState is when the process last warmed the engine or ended a run,
// and for how many workers. A process that idled longer than warmAfter
// (a service worker between jobs) has had its free heap pages returned to
// the system and its pooled response buffers collected, and is as cold
// as a new one.
var warmState struct {
	sync.Mutex
	until   time.Time
	workers int
}

const warmAfter = time.Second

// warmUp runs the engine before a run's clock starts, when the process is
// cold (its first run, or its first after idling warmAfter, or more workers
// than it warmed), against a listener of its own on loopback: min(c, 64) workers,
// one request each, 32 KiB bodies. A fresh Go process pays for its first
// requests' path: code paged in, the runtime's poller set up, the heap
// grown page by page for every worker's buffers, goroutine stacks grown
// until the runtime learns their size. ab, a small C program, pays almost
// none of that, so a cold `benchq ab -n 100 -c 50` timed 13-15 ms where ab
// times 8 and a warm process 5; warmed, it times 5 too.
//
// Nothing is sent to any target and nothing leaves the process; where
// loopback is down (a network namespace without it) the warm-up is
// skipped. A service's worker warms at the first run of a job that
// follows an idle spell: its first run timed 12-15 ms where its later runs
// timed 5, and 5-7 ms warmed.
func warmUp(concurrency int) {
	n := min(concurrency, warmUpWorkers)
	warmState.Lock()
	defer warmState.Unlock()
	if time.Now().Before(warmState.until) && n <= warmState.workers {
		return
	}
	warmState.workers = n
	defer func() { warmState.until = time.Now().Add(warmAfter) }()
	func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return
		}
		defer ln.Close()
		go answerWarmUp(ln)
		p := measure.Plan{URLs: []string{"http://" + ln.Addr().String() + "/"}, Requests: n, Concurrency: n, Timeout: time.Second}
		e, err := newEngine(p.WithDefaults())
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if e.resolve(ctx) == nil {
			e.run(ctx)
		}
	}()
}

// ranUntil notes that a run ended at t: the process stays warm for
// warmAfter more.
func ranUntil(t time.Time) {
	warmState.Lock()
	defer warmState.Unlock()
	warmState.until = t.Add(warmAfter)
}

// answerWarmUp answers every warm-up request with the same response and
// closes, until the listener is closed.
func answerWarmUp(ln net.Listener) {
	var resp bytes.Buffer
	resp.WriteString("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(warmUpBody) + "\r\n\r\n")
	resp.Write(make([]byte, warmUpBody))
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(time.Second))
			buf := make([]byte, 4096)
			if _, err := c.Read(buf); err == nil {
				// A copy per connection on purpose: it grows the heap by
				// one body per worker, pages the run's buffers and stacks
				// then reuse instead of faulting in fresh ones (most of a
				// cold run's extra time on this machine).
				_, _ = c.Write(append([]byte(nil), resp.Bytes()...))
			}
		}()
	}
}

// The measured window (Plan.Warmup): the engine loads the target from its
// start, and what completes or fails before measureFrom goes to the
// timeline only. Each worker decides per event, by the event's own time,
// so the shards' counts and histograms never hold a warm-up request and
// nothing is subtracted from them afterwards; the few counters a worker
// keeps running (bytes read and written, completions for the progress
// reporter) are read at its last warm-up event and taken off at the end.

// runFor is how long a timed run loads the target: its warm-up, then its
// measured Duration.
func (e *engine) runFor() time.Duration { return e.plan.Warmup + e.plan.Duration }

// warming reports whether an event at t falls in the warm-up.
func (e *engine) warming(t time.Time) bool {
	return !e.measureFrom.IsZero() && t.Before(e.measureFrom)
}

// windowCPU is the process's CPU reading at the measured window's start,
// so the client's CPU is judged over the window the result covers.
type windowCPU struct {
	mu      sync.Mutex
	pending bool // the run has a window to read at
	set     bool // and it was read
	read    cpuReading
}

// from is the reading to measure the client's CPU from: the window's, or
// start when the run has no warm-up. A run that ended inside its warm-up
// has an empty window and reads now.
func (c *windowCPU) from(start cpuReading) cpuReading {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.set:
		return c.read
	case c.pending:
		return readCPU()
	}
	return start
}

// startWindow sets the measured window's start after the plan's Warmup
// and reads the CPU then; the returned func stops the reading.
func (e *engine) startWindow() func() {
	if e.plan.Warmup <= 0 {
		return func() {}
	}
	e.measureFrom = e.start.Add(e.plan.Warmup)
	e.windowCPU.mu.Lock()
	e.windowCPU.pending = true
	e.windowCPU.mu.Unlock()
	t := time.AfterFunc(e.plan.Warmup, func() {
		r := readCPU()
		e.windowCPU.mu.Lock()
		defer e.windowCPU.mu.Unlock()
		e.windowCPU.read, e.windowCPU.set = r, true
	})
	return func() { t.Stop() }
}

// completeWarm counts a request to target ti that completed in the
// warm-up: in the timeline and the progress reporter only.
func (w *worker) completeWarm(ti int, intended, start time.Time, tm *timing) time.Time {
	e, body := w.e, w.body
	lengthFailed := false
	if doc := e.first(ti, &w.hdr, body); body != doc && !e.plan.AcceptVariableLength {
		w.pub.failed.Add(1)
		lengthFailed = true
	}
	w.local.lastEvent = tm.done
	flushed := false
	if e.recordTimeline {
		r := record{total: micros(tm.done.Sub(intended)), status: int32(w.hdr.StatusCode()), warm: true, lengthFailed: lengthFailed}
		flushed = w.stamp(&r, tm.done, intended, start)
		w.batch = append(w.batch, r)
	}
	w.pub.completed.Add(1)
	w.pub.done.Add(1)
	w.pub.bytes.Store(w.tc.total)
	w.noteWarm()
	if len(w.batch) == batchSize {
		w.flush()
		flushed = true
	}
	if flushed {
		return time.Time{} // the flush took time: read the clock afresh
	}
	return tm.done
}

// noteWarm marks what the worker's running counters held at its latest
// warm-up event, to be taken off the measured window's.
func (w *worker) noteWarm() {
	w.local.warmCompleted = w.pub.completed.Load()
	w.local.warmBytes = w.tc.total
	w.local.warmSent = w.local.sent
	w.local.warmSpun = w.local.spun
}
