package loadgen

import (
	"context"
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
func Run(ctx context.Context, p Plan) (*Measurement, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e, err := newEngine(p.withDefaults())
	if err != nil {
		return nil, err
	}
	return e.run(ctx), nil
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
	plan    Plan
	targets []target
	dialer  dialer
	open    bool
	workers []*worker
	shards  []*shard

	issued atomic.Int64 // closed: requests taken from the budget; open: next start index
	halted atomic.Bool
	docLen atomic.Int64 // body length of the first completed response; -1 before

	start      time.Time
	dialCtx    context.Context
	cancelDial context.CancelFunc

	stopOnce   sync.Once
	stopCh     chan struct{}
	reason     stopReason
	stoppedAt  time.Time
	abortedMsg string

	firstMu        sync.Mutex
	serverSoftware string
	tlsProto       string
}

func newEngine(p Plan) (*engine, error) {
	e := &engine{plan: p, dialer: dialer{hook: p.Dial}, open: p.Rate > 0, stopCh: make(chan struct{})}
	for _, raw := range p.URLs {
		t, err := buildTarget(p, raw)
		if err != nil {
			return nil, err
		}
		e.targets = append(e.targets, t)
	}
	e.docLen.Store(-1)
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
func (e *engine) run(ctx context.Context) *Measurement {
	e.dialCtx, e.cancelDial = context.WithCancel(context.Background())
	cpuStart := readCPU()
	e.start = time.Now()
	var wg sync.WaitGroup
	for _, w := range e.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	watchDone := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			e.stop(stopCanceled, "")
		case <-watchDone:
		}
	}()
	if e.plan.Duration > 0 {
		timer := time.AfterFunc(e.plan.Duration, func() { e.stop(stopDuration, "") })
		defer timer.Stop()
	}
	progressDone := e.startProgress()
	wg.Wait()
	used := usageSince(cpuStart)
	close(watchDone)
	e.stop(stopFinished, "")
	<-progressDone
	m := e.measurement()
	m.ClientCPU, m.ClientCPUWait, m.ClientCores = used.cpu, used.wait, used.cores
	return m
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

// first returns the document length, taking it and the server software from
// resp when it is the first response to complete. The lock is taken only
// until then.
func (e *engine) first(resp *fasthttp.Response, body int64) int64 {
	if d := e.docLen.Load(); d >= 0 {
		return d
	}
	e.firstMu.Lock()
	defer e.firstMu.Unlock()
	if d := e.docLen.Load(); d >= 0 {
		return d
	}
	e.serverSoftware = serverSoftware(resp.Header.Server())
	e.docLen.Store(body)
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
