package loadgen

import (
	"github.com/benchq/benchq/internal/measure"
	"slices"
	"time"
)

// measurement assembles the result once every worker has stopped.
func (e *engine) measurement() *measure.Measurement {
	t := &e.targets[0]
	m := &measure.Measurement{
		ServerSoftware: e.serverSoftware,
		ServerHostname: t.host,
		ServerPort:     t.port,
		DocumentPath:   t.path,
		DocumentLength: max(0, e.docLen.Load()),
		TLSProtocol:    e.tlsProto,
		Concurrency:    e.plan.Concurrency,
		KeepAlive:      e.plan.KeepAlive,
		Method:         e.plan.Method,
		Started:        e.start,
		StatusCodes:    make(map[int]int64),
		Canceled:       e.reason == stopCanceled,
	}
	switch e.reason {
	case stopAborted:
		m.Aborted = e.abortedMsg
	case stopWatched:
		m.Stopped = e.abortedMsg
	}
	if e.open {
		m.Open = &measure.OpenModel{RequestedRate: e.requestedRate()}
	}
	var lastEvent, lastStart time.Time
	for _, w := range e.workers {
		c := &w.local
		m.Complete += w.pub.completed.Load() - c.warmCompleted
		m.Failures.Merge(c.failures)
		m.TLSFailures.Merge(c.tlsFailures)
		m.WriteErrors += c.writeErrors
		m.Non2xx += c.non2xx
		m.KeepAliveRequests += c.keepAlive
		m.TotalReceivedBytes += w.pub.bytes.Load() - c.warmBytes
		m.BodyReceivedBytes += c.body
		m.TotalSentBytes += c.sent - c.warmSent
		m.ClientSpin += c.spun - c.warmSpun
		m.Samples = append(m.Samples, c.samples...)
		if c.lastEvent.After(lastEvent) {
			lastEvent = c.lastEvent
		}
		if c.lastStart.After(lastStart) {
			lastStart = c.lastStart
		}
		if m.Open != nil {
			m.Open.LateStarts += c.late
		}
		m.ConnectToWrite.Merge(&c.connectWrite)
		m.MaxInFlight = max(m.MaxInFlight, c.maxInFlight)
		m.Connections += c.conns
		m.MaxStreams = max(m.MaxStreams, c.maxStreams)
		for k, n := range c.h2codes {
			if m.H2ErrorCodes == nil {
				m.H2ErrorCodes = make(map[string]int64)
			}
			m.H2ErrorCodes[k] += n
		}
	}
	if e.h2 {
		m.HTTPVersion = measure.HTTP2
		// A connection's requests overlap: the most in flight is what the
		// connections carried at once, at most Concurrency × MaxStreams.
		var n int64
		for _, w := range e.workers {
			n += int64(w.local.maxStreams)
		}
		m.MaxInFlight = n
	} else if e.conc != nil {
		m.MaxInFlight = e.rampPeak()
	} else if !e.open {
		m.MaxInFlight = e.maxBusy()
	}
	m.Failed = m.Failures.Total()
	for _, s := range e.shards {
		s.into(m)
	}
	m.Elapsed = e.elapsed(lastEvent)
	m.Timeline = e.timeline()
	if !e.measureFrom.IsZero() {
		m.Started, m.Warmup = e.measureFrom, e.plan.Warmup
	}
	if m.Open != nil && !lastStart.IsZero() && !e.warming(lastStart) {
		// n starts on time span (n-1) intervals; count the last one's too.
		span := lastStart.Sub(e.windowStart()).Seconds() + e.startGap(lastStart)
		m.Open.AchievedRate = float64(e.started()-e.warmStarts()) / span
	}
	return m
}

// elapsed is ab's "Time taken for tests": to the last completion or failure,
// or to the stop when the run was timed, canceled or aborted (ab takes "now"
// on -t and Ctrl-C).
func (e *engine) elapsed(lastEvent time.Time) time.Duration {
	end := e.stoppedAt
	if e.reason == stopFinished && !lastEvent.IsZero() {
		end = lastEvent
	}
	return max(0, end.Sub(e.windowStart()))
}

// windowStart is when the measured window started: the engine's start, or
// the end of the warm-up.
func (e *engine) windowStart() time.Time {
	if e.measureFrom.IsZero() {
		return e.start
	}
	return e.measureFrom
}

// maxBusy is the most closed-model workers busy at once: the deepest
// overlap of their [busyFrom, busyUntil] spans. A span that ends when
// another starts does not overlap it.
func (e *engine) maxBusy() int64 {
	type edge struct {
		at    time.Time
		delta int64
	}
	edges := make([]edge, 0, 2*len(e.workers))
	for _, w := range e.workers {
		if c := &w.local; !c.busyFrom.IsZero() {
			edges = append(edges, edge{c.busyFrom, 1}, edge{c.busyUntil, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return int(a.delta - b.delta) // ends first
	})
	var n, most int64
	for _, ed := range edges {
		n += ed.delta
		most = max(most, n)
	}
	return most
}

// warmStarts is how many of the open model's starts fell in the warm-up.
func (e *engine) warmStarts() int64 {
	var n int64
	for _, w := range e.workers {
		n += w.local.warmStarts
	}
	return n
}

func (e *engine) started() int64 {
	var n int64
	for _, w := range e.workers {
		n += w.pub.started.Load()
	}
	return n
}
