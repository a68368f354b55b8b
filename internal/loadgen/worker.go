package loadgen

import (
	"bufio"
	"errors"
	"github.com/benchq/benchq/internal/measure"
	"math"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// readBufferSize bounds a response header, as ab's 8 KB buffer does.
const readBufferSize = 8192

// aLongTimeAgo is a deadline that makes blocked I/O return at once.
var aLongTimeAgo = time.Unix(1, 0)

// tally is what the progress reporter reads of a worker while it runs.
type tally struct {
	started, done, completed, failed, bytes atomic.Int64
}

// worker runs requests one after another on a connection it owns, writing
// fasthttp's request bytes and reading the answer with readResponse (the
// header parsed by fasthttp, the body counted through the read buffer, never
// kept): no pool, no per-host cap, no goroutine or allocation per request,
// and memory that does not grow with what the target sends.
type worker struct {
	e     *engine
	shard *shard
	pub   tally

	tc      timedConn
	conn    net.Conn // current connection; nil when none
	connTo  int      // index of the target conn is connected to
	br      *bufio.Reader
	hdr     fasthttp.ResponseHeader // the last response's header
	body    int64                   // the last response's body length
	armedAt time.Time               // when the current deadline was set

	mu   sync.Mutex // guards live against the stopper
	live net.Conn

	batch []record
	local counts
	// pending is the event time (ns from the timeline's origin) of the
	// oldest record in batch, math.MaxInt64 when the batch is empty: the
	// live timeline (live.go) closes no interval the worker still holds a
	// record of. Stored once per batch, never per request. batchEnd is
	// the end of that record's interval: a record past it flushes the
	// batch first, so a batch holds one interval and hands it over as
	// soon as the worker moves on.
	pending  atomic.Int64
	batchEnd int64
	// tlBytes is what the worker's timeline records have counted of
	// tc.total; reqIntended and reqStart are the open model's current
	// request's, for its failure's record.
	tlBytes               int64
	reqIntended, reqStart time.Time
	h2                    *h2conn // the HTTP/2 connection state, on HTTP/2 only
}

// counts are the worker's own totals, read only after it has stopped.
type counts struct {
	failures    measure.Failures
	writeErrors int64
	non2xx      int64
	keepAlive   int64
	sent        int64
	body        int64
	late        int64
	lastEvent   time.Time     // last completion or failure
	lastStart   time.Time     // open model: last actual start
	spun        time.Duration // reads spun before waiting (spin_linux.go)
	samples     []measure.Sample
	// busyFrom and busyUntil bound the closed-model worker's requests, which
	// follow each other without a gap: the overlap of the workers' spans is
	// the run's most requests in flight, at no cost per request.
	busyFrom, busyUntil time.Time
	maxInFlight         int64         // open model: most in flight seen at a start
	connectWrite        measure.Phase // http_load's connect: dial start to request written
	tlsFailures         measure.TLSFailures
	conns               int64            // HTTP/2: connections opened
	maxStreams          int              // HTTP/2: most streams in flight on one connection
	h2codes             map[string]int64 // HTTP/2: error codes the server sent
	// What the running counters held at the worker's latest warm-up event
	// (noteWarm), and the open model's starts in the warm-up.
	warmCompleted, warmBytes, warmSent, warmStarts int64
	warmSpun                                       time.Duration
}

// timing holds the timestamps of one request.
type timing struct {
	reused                              bool
	handshake                           time.Duration // TLS handshake of a new connection; -1 without one
	connected, written, firstByte, done time.Time
}

var errStopped = errors.New("loadgen: run stopped")

// prepare allocates what the worker's requests reuse.
func (w *worker) prepare() {
	w.br = bufio.NewReaderSize(&w.tc, readBufferSize)
	w.tc.sink = w.e.sink
	w.batch = make([]record, 0, batchSize)
	w.pending.Store(math.MaxInt64)
	if w.e.h2 {
		w.prepareH2()
	}
}

func (w *worker) run() {
	defer w.finish()
	if w.e.h2 {
		w.runH2()
	} else if w.e.open {
		w.runOpen()
	} else {
		w.runClosed()
	}
}

func (w *worker) finish() {
	w.closeConn()
	if w.e.recordTimeline && w.tc.total > w.tlBytes {
		// Bytes read by requests the end cut short are in the run's
		// total, so the timeline has them too, at the stop.
		r := record{kind: recBytes}
		w.stamp(&r, time.Now(), time.Time{}, time.Time{})
		w.batch = append(w.batch, r)
	}
	w.flush()
	w.br = nil
}

// stamp fills a timeline record's event time, the bytes received since the
// worker's previous record and, in the open model, the request's intended
// and actual start (zero intended: none). A record of a later interval than
// the batch's hands the batch over first; stamp reports whether it did.
func (w *worker) stamp(r *record, at, intended, start time.Time) (flushed bool) {
	e := w.e
	r.at = int64(at.Sub(e.origin))
	if len(w.batch) > 0 && r.at >= w.batchEnd {
		w.flush()
		flushed = true
	}
	if len(w.batch) == 0 {
		step := int64(e.timelineInterval)
		w.batchEnd = (max(0, r.at)/step + 1) * step
		w.pending.Store(r.at)
	}
	r.bytes = w.tc.total - w.tlBytes
	w.tlBytes = w.tc.total
	r.started = -1
	if e.open && !intended.IsZero() {
		r.started = int64(start.Sub(e.origin))
		r.lag = micros(start.Sub(intended))
	}
	return flushed
}

// recordFailure queues a failed request of class c at now for the
// timeline.
func (w *worker) recordFailure(c class, now, intended, start time.Time) {
	r := record{kind: recFailed, failedAs: uint8(c)}
	w.stamp(&r, now, intended, start)
	w.batch = append(w.batch, r)
	if len(w.batch) == batchSize {
		w.flush()
	}
}

// runClosed is ab's model: the next request starts when the previous ends,
// until the budget or the run ends.
func (w *worker) runClosed() {
	var next time.Time
	for w.e.take() {
		start := next
		if start.IsZero() {
			start = time.Now()
			if w.local.busyFrom.IsZero() {
				w.local.busyFrom = start
			}
		}
		next = w.do(start, start)
	}
	if !w.local.busyFrom.IsZero() {
		w.local.busyUntil = time.Now()
	}
}

// do runs one request meant to start at intended that starts at start. It
// returns the completion time, which the next request reuses as its start
// (ab's rule on a kept-alive connection, and one clock read saved), or the
// zero time when the next start must be read afresh.
func (w *worker) do(intended, start time.Time) time.Time {
	w.pub.started.Add(1)
	if w.e.open {
		w.reqIntended, w.reqStart = intended, start
	}
	ti := 0
	if n := len(w.e.targets); n > 1 {
		ti = rand.IntN(n)
	}
	tm, st, err := w.attempt(ti, start)
	if err != nil && tm.reused && st != stageDial && w.tc.read == 0 && isStaleConn(err) && !w.e.stopped() {
		// The server closed the idle kept-alive connection before this
		// request reached it: not a failure, ab retries it silently.
		w.closeConn()
		tm, st, err = w.attempt(ti, start)
	}
	if err != nil {
		w.fail(st, err)
		return time.Time{}
	}
	return w.complete(ti, intended, start, &tm)
}

// attempt sends the request to target ti on the current connection or a
// new one and reads the whole response, its body counted in w.body.
func (w *worker) attempt(ti int, start time.Time) (tm timing, st stage, err error) {
	t := &w.e.targets[ti]
	tm.reused = w.conn != nil && w.connTo == ti
	tm.connected = start
	tm.handshake = -1
	if !tm.reused {
		if tm.handshake, err = w.connect(ti, start); err != nil {
			return tm, stageDial, err
		}
		tm.connected = time.Now()
	}
	w.arm(start)
	w.tc.arm()
	n, err := w.conn.Write(t.req)
	w.local.sent += int64(n)
	if err != nil {
		return tm, stageWrite, lateHandshake(&tm, err)
	}
	tm.written = time.Now()
	// The response cannot be there yet. Let the other workers run first:
	// when the client is the bottleneck the answer arrives meanwhile and the
	// read below finds it, instead of failing once and costing a trip
	// through the poller (a third fewer reads without keep-alive). When no
	// other worker is ready, the yield returns at once.
	runtime.Gosched()
	body, closing, err := readResponse(w.br, w.tc.skipper(), &w.hdr, t.head, w.e.plan.MaxBody)
	if err != nil {
		if w.tc.err != nil && !errors.Is(err, ErrBodyTooLarge) && !errors.Is(err, ErrHeaderTooLarge) {
			err = w.tc.err // fasthttp reports a failed first read as io.EOF
		}
		if err = lateHandshake(&tm, err); errors.As(err, new(*TLSHandshakeError)) {
			return tm, stageDial, err
		}
		return tm, stageRead, err
	}
	w.body = body
	if closing && w.tc.err == nil { // a body read to the close has seen it
		// Wait for the server's close, as ab does without -k: Total ends
		// there, and the TIME_WAIT stays with the server, whose active close
		// it is, instead of eating this machine's ephemeral ports.
		_, _ = w.br.Peek(1)
	}
	tm.done = time.Now()
	tm.firstByte = w.tc.firstRead
	if closing || !w.e.plan.KeepAlive {
		w.closeConn()
	}
	return tm, st, nil
}

// lateHandshake turns an alert the server sends on a new TLS connection's
// first exchange into the handshake failure it is: TLS 1.3 clients finish
// their handshake before the server has checked their certificate.
func lateHandshake(tm *timing, err error) error {
	if tm.handshake >= 0 && isRemoteAlert(err) {
		return newHandshakeError(err)
	}
	return err
}

// connect opens a connection to target ti, bounded by the request's
// deadline, and returns its TLS handshake's duration (-1 without TLS).
func (w *worker) connect(ti int, start time.Time) (time.Duration, error) {
	w.closeConn()
	t := &w.e.targets[ti]
	conn, armed, hs, err := w.e.dial(w.e.dialCtx, t, start.Add(w.e.plan.Timeout))
	if err != nil {
		var refused *errRefusedByGuard
		if errors.As(err, &refused) {
			w.e.refuse(refused.err)
		}
		return 0, err
	}
	if t.tls == nil {
		hs = -1
	}
	if t.tls != nil {
		w.e.noteTLS(conn)
	}
	if w.e.spin {
		allowSpin(conn, &w.local.spun)
	}
	w.tc.Conn = conn
	w.br.Reset(&w.tc)
	w.conn, w.connTo = conn, ti
	w.armedAt = time.Time{}
	if armed {
		w.armedAt = start // the dial set this request's deadline
	}
	w.mu.Lock()
	w.live = conn
	w.mu.Unlock()
	if w.e.stopped() {
		w.closeConn()
		return 0, errStopped
	}
	return hs, nil
}

// arm bounds the request starting at start by the plan's timeout. A deadline
// costs two runtime timer updates, so it is renewed only once the current one
// would cut a request more than 1% short: each request then gets between 99%
// and 100% of Timeout, as fasthttp's server does with its own deadlines.
func (w *worker) arm(start time.Time) {
	timeout := w.e.plan.Timeout
	if !w.armedAt.IsZero() && start.Sub(w.armedAt) < timeout/100 {
		return
	}
	w.armedAt = start
	_ = w.conn.SetDeadline(start.Add(timeout))
	if w.e.stopped() {
		// The stopper may have set its past deadline just before ours.
		_ = w.conn.SetDeadline(aLongTimeAgo)
	}
}

func (w *worker) closeConn() {
	if w.conn == nil {
		return
	}
	w.mu.Lock()
	w.live = nil
	w.mu.Unlock()
	_ = w.conn.Close()
	w.conn, w.tc.Conn = nil, nil
}

// interrupt makes the worker's blocked I/O return; called by the stopper.
func (w *worker) interrupt() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live != nil {
		_ = w.live.SetDeadline(aLongTimeAgo)
	}
}

// fail counts a request that did not complete. A request cut short by the
// end of the run is not counted at all, as ab -t does with those in flight.
func (w *worker) fail(st stage, err error) {
	now := time.Now()
	w.closeConn()
	w.pub.done.Add(1)
	w.pub.bytes.Store(w.tc.total)
	if w.e.stopped() {
		return
	}
	c := classify(st, err)
	warm := w.e.warming(now)
	if !warm {
		countFailure(&w.local.failures, c)
	}
	if w.e.recordTimeline {
		w.recordFailure(c, now, w.reqIntended, w.reqStart)
	}
	var he *TLSHandshakeError
	if c == classTLSHandshake && errors.As(err, &he) && !warm {
		w.local.tlsFailures.Add(he.Reason)
	}
	w.pub.failed.Add(1)
	w.local.lastEvent = now
	if c == classWrite && !warm {
		w.local.writeErrors++
	}
	if warm {
		w.noteWarm()
	}
	if w.e.plan.ContinueOnError || w.e.docLen.Load() >= 0 {
		return
	}
	switch {
	case c == classConnect && errors.Is(err, syscall.ECONNREFUSED):
		w.e.abort(err)
	case c == classTLSHandshake && errors.As(err, &he):
		// ab gives up on a failed handshake; before any success it means
		// the port does not speak TLS, and every request would fail alike.
		w.e.stop(stopAborted, tlsAbortMessage(he))
	}
}

// complete counts a completed request to target ti and queues its timings
// for the shard.
func (w *worker) complete(ti int, intended, start time.Time, tm *timing) time.Time {
	if w.e.warming(tm.done) {
		return w.completeWarm(ti, intended, start, tm)
	}
	e, body := w.e, w.body
	status := w.hdr.StatusCode()
	lengthFailed := false
	if doc := e.first(ti, &w.hdr, body); body != doc && !e.plan.AcceptVariableLength {
		w.local.failures.Length++
		w.pub.failed.Add(1)
		lengthFailed = true
	}
	if status < 200 || status > 299 {
		w.local.non2xx++
	}
	if e.plan.KeepAlive && w.conn != nil {
		w.local.keepAlive++
	}
	w.local.body += body
	w.local.lastEvent = tm.done
	if !tm.reused {
		w.local.connectWrite.Record(micros(tm.written.Sub(start)))
	}
	r := record{
		connect:     micros(tm.connected.Sub(start)),
		waiting:     micros(tm.firstByte.Sub(tm.written)),
		total:       micros(tm.done.Sub(intended)),
		uncorrected: micros(tm.done.Sub(start)),
		handshake:   handshakeMicros(tm.handshake),
		status:      int32(status),
	}
	flushed := false
	if e.recordTimeline {
		r.lengthFailed = lengthFailed
		flushed = w.stamp(&r, tm.done, intended, start)
	}
	w.batch = append(w.batch, r)
	w.pub.completed.Add(1)
	w.pub.done.Add(1)
	w.pub.bytes.Store(w.tc.total)
	if e.plan.RecordSamples {
		w.sample(intended, start, tm, status)
	}
	if len(w.batch) == batchSize {
		w.flush()
		flushed = true
	}
	if flushed {
		return time.Time{} // the flush took time: read the clock afresh
	}
	return tm.done
}

func (w *worker) sample(intended, start time.Time, tm *timing, status int) {
	connect := tm.connected.Sub(start)
	w.local.samples = append(w.local.samples, measure.Sample{
		Start:      start,
		Connect:    connect,
		Processing: tm.done.Sub(start) - connect,
		Waiting:    tm.firstByte.Sub(tm.written),
		Total:      tm.done.Sub(intended),
		Status:     status,
	})
}

func (w *worker) flush() {
	if len(w.batch) > 0 {
		w.shard.add(w.batch, w.e.open)
		w.batch = w.batch[:0]
		w.pending.Store(math.MaxInt64)
	}
}

// handshakeMicros is a record's handshake: -1 when the request opened no
// TLS connection.
func handshakeMicros(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return micros(d)
}

func micros(d time.Duration) int64 {
	return max(0, int64(d/time.Microsecond))
}
