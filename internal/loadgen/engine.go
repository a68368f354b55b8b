package loadgen

import (
	"context"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Run performs one measurement of p. It returns an error only for a plan
// that can never run (wrapping ErrInvalidPlan) or a broken engine; what the
// target does, refusals and timeouts included, is data in the Measurement.
// When ctx is canceled the load stops within a second and Run returns what
// completed, with Measurement.Canceled set.
func Run(ctx context.Context, p measure.Plan) (*measure.Measurement, error) {
	return runWith(ctx, p, true)
}

// runWith is Run, with the timeline recorded or not: a run always records one;
// the engine's benchmarks measure what recording it costs.
func runWith(ctx context.Context, p measure.Plan, recordTimeline bool) (*measure.Measurement, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e, err := newEngine(p.WithDefaults())
	if err != nil {
		return nil, err
	}
	e.recordTimeline = recordTimeline
	if err := e.resolve(ctx); err != nil {
		return nil, err
	}
	warmUp(e.plan.Concurrency)
	m := e.run(ctx)
	ranUntil(time.Now())
	if e.refused != nil {
		return m, e.refused
	}
	return m, nil
}

// stopReason says why a run ended.
type stopReason int

const (
	stopFinished stopReason = iota // every worker ran out of work
	stopDuration
	stopCanceled
	stopAborted
)

// engine is the state of one run shared by its workers. Fields below the
// atomics are written once before the workers start, or under firstMu.
type engine struct {
	plan    measure.Plan
	targets []target
	guard   measure.Guard
	open    bool
	h2      bool // HTTP/2: each worker is a connection with Plan.MaxStreams streams
	workers []*worker
	shards  []*shard

	issued atomic.Int64 // closed: requests taken from the budget; open: next start index
	halted atomic.Bool
	docLen atomic.Int64 // body length of the first completed response; -1 before
	// docLens[i] is the body length of target i's first completed response,
	// -1 before: with several URLs each response is checked against its own
	// URL's, as http_load does, not against another document's.
	docLens  []atomic.Int64
	inFlight atomic.Int64 // open model only: requests between start and end

	start      time.Time
	dialCtx    context.Context
	cancelDial context.CancelFunc

	stopOnce   sync.Once
	stopCh     chan struct{}
	reason     stopReason
	stoppedAt  time.Time
	abortedMsg string
	refused    error // the Guard's refusal of a connect, wrapping ErrUnreachable
	spin       bool  // each worker has a core: reads spin before they wait
	// recordTimeline says whether the run keeps a timeline, of intervals
	// timelineInterval long from origin: the engine's start, or the
	// plan's StartAt when the run waited for it.
	recordTimeline   bool
	timelineInterval time.Duration
	origin           time.Time
	// measureFrom is when the measured window starts, after the plan's
	// Warmup; zero without one (warmup.go's window half).
	measureFrom time.Time
	windowCPU   windowCPU
	// sink is the buffer every worker names when it skips body bytes: the
	// kernel discards them unread, so one buffer serves all (discard).
	sink []byte

	firstMu        sync.Mutex
	serverSoftware string
	tlsProto       string
}

func newEngine(p measure.Plan) (*engine, error) {
	e := &engine{plan: p, guard: p.Guard, open: p.Rate > 0, h2: p.HTTPVersion == measure.HTTP2, stopCh: make(chan struct{})}
	if e.guard == nil {
		e.guard = systemResolver{}
	}
	e.spin = p.Concurrency <= clientCores()
	e.sink = make([]byte, maxSkip)
	for _, raw := range p.URLs {
		t, err := buildTarget(p, raw)
		if err != nil {
			return nil, err
		}
		if e.h2 {
			if t.tls != nil {
				t.tls = h2TLSConfig(t.tls)
			}
			t.h2 = buildH2Request(p, &t)
		}
		e.targets = append(e.targets, t)
	}
	if e.h2 {
		if err := checkH2Targets(e.targets); err != nil {
			return nil, err
		}
	}
	e.docLen.Store(-1)
	e.docLens = make([]atomic.Int64, len(e.targets))
	for i := range e.docLens {
		e.docLens[i].Store(-1)
	}
	nShards := min(p.Concurrency, runtime.GOMAXPROCS(0))
	for range nShards {
		e.shards = append(e.shards, newShard(e.open))
	}
	e.workers = make([]*worker, p.Concurrency)
	for i := range e.workers {
		e.workers[i] = &worker{e: e, shard: e.shards[i%nShards]}
	}
	return e, nil
}

// run drives the workers to the end of the run and assembles the result.
func (e *engine) run(ctx context.Context) *measure.Measurement {
	e.dialCtx, e.cancelDial = context.WithCancel(context.Background())
	// Every worker has its goroutine and buffers before the clock starts,
	// as ab's connection slots exist before its clock does: a short run
	// (-n 100 -c 50) would otherwise time fifty goroutine starts too.
	var ready, wg sync.WaitGroup
	begin := make(chan struct{})
	for _, w := range e.workers {
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.prepare()
			ready.Done()
			<-begin
			w.run()
		}()
	}
	ready.Wait()
	if !waitStart(ctx, e.plan.StartAt) {
		e.stop(stopCanceled, "") // before any worker may take a request
	}
	cpuStart := readCPU()
	e.start = time.Now()
	e.startTimeline()
	stopWindow := e.startWindow()
	defer stopWindow()
	close(begin)
	watchDone := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			e.stop(stopCanceled, "")
		case <-watchDone:
		}
	}()
	if e.plan.Duration > 0 {
		timer := time.AfterFunc(e.runFor(), func() { e.stop(stopDuration, "") })
		defer timer.Stop()
	}
	progressDone := e.startProgress()
	live, liveDone := e.startLive()
	wg.Wait()
	used := usageSince(e.windowCPU.from(cpuStart))
	close(watchDone)
	e.stop(stopFinished, "")
	<-progressDone
	<-liveDone
	m := e.measurement()
	live.closeRest(m.Timeline)
	m.ClientCPU, m.ClientCPUWait, m.ClientCores = used.cpu, used.wait, used.cores
	return m
}

// waitStart sleeps until at (nothing for the zero time) and reports
// false when ctx ended first.
func waitStart(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if at.IsZero() || d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// take reports whether a closed-model worker may start another request.
func (e *engine) take() bool {
	if e.stopped() {
		return false
	}
	return e.plan.Requests == 0 || e.issued.Add(1) <= int64(e.plan.Requests)
}

func (e *engine) stopped() bool { return e.halted.Load() }

// stop ends the run once: no new request starts and blocked I/O returns.
func (e *engine) stop(r stopReason, msg string) {
	e.stopOnce.Do(func() {
		e.reason, e.abortedMsg, e.stoppedAt = r, msg, time.Now()
		e.halted.Store(true)
		close(e.stopCh)
		e.cancelDial()
		for _, w := range e.workers {
			w.interrupt()
		}
	})
}

// abort stops the run where ab would give up.
func (e *engine) abort(err error) {
	e.stop(stopAborted, err.Error())
}

// refuse aborts the run because the Guard refused a connection; Run
// returns err.
func (e *engine) refuse(err error) {
	e.firstMu.Lock()
	if e.refused == nil {
		e.refused = err
	}
	e.firstMu.Unlock()
	e.abort(err)
}

// first returns target ti's document length, taking it from body when the
// response (header h) is the target's first to complete, and the run's
// document length and server software when it is the run's first. Nothing
// of the response is kept but those. The lock is taken only until each
// target has its length.
func (e *engine) first(ti int, h *fasthttp.ResponseHeader, body int64) int64 {
	if d := e.docLens[ti].Load(); d >= 0 {
		return d
	}
	return e.firstOf(ti, h.Server(), body)
}

// firstOf is first's slow path, given the response's Server header.
func (e *engine) firstOf(ti int, server []byte, body int64) int64 {
	e.firstMu.Lock()
	defer e.firstMu.Unlock()
	if d := e.docLens[ti].Load(); d >= 0 {
		return d
	}
	if e.docLen.Load() < 0 {
		e.serverSoftware = serverSoftware(server)
		e.docLen.Store(body)
	}
	e.docLens[ti].Store(body)
	return body
}

// noteTLS keeps the protocol of the first TLS connection for the report.
func (e *engine) noteTLS(conn net.Conn) {
	e.firstMu.Lock()
	defer e.firstMu.Unlock()
	if e.tlsProto == "" {
		e.tlsProto = tlsProtocol(conn)
	}
}

// serverSoftware applies ab's rule: the Server header up to its first space.
func serverSoftware(v []byte) string {
	for i, c := range v {
		if c <= ' ' {
			return string(v[:i])
		}
	}
	return string(v)
}
