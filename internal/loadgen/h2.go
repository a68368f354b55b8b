package loadgen

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP/2 flow control as h2load sets it (-w 30 -W 30): windows of 2^30-1
// for each stream and for the connection, replenished once half is
// consumed, so a benchmark measures the server, not WINDOW_UPDATE round
// trips.
const (
	h2Window     = 1<<30 - 1
	h2InitialWin = 65535 // RFC 9113's initial window, before any SETTINGS
	// h2EarlyStreams is how many streams a connection opens before the
	// server's SETTINGS say how many it allows: RFC 9113 recommends that a
	// server allow at least 100.
	h2EarlyStreams = 100
	h2FrameSize    = 16384 // the default SETTINGS_MAX_FRAME_SIZE
)

var (
	// errH2NoALPN: the TLS server did not negotiate "h2".
	errH2NoALPN = errors.New("loadgen: server did not negotiate HTTP/2 (ALPN h2)")
	// errH2NoStream: a connection ended before it carried any request.
	errH2NoStream = errors.New("loadgen: HTTP/2 connection ended before carrying a request")
)

// h2TLSConfig is the TLS configuration of an HTTP/2 connection to t: t's
// own, offering only "h2" by ALPN.
func h2TLSConfig(c *tls.Config) *tls.Config {
	c = c.Clone()
	c.NextProtos = []string{"h2"}
	return c
}

// h2Request is a target's request as HTTP/2 sends it: the header fields in
// order and the body.
type h2Request struct {
	fields []hpack.HeaderField
	body   []byte
}

// buildH2Request lays out the request of plan p to t: the pseudo-headers
// (:authority from a Host header of the plan when it gives one), then
// user-agent, accept, the plan's headers lowercased (connection-specific
// ones dropped, as RFC 9113 requires), content-type and content-length for
// a body.
func buildH2Request(p measure.Plan, t *target) h2Request {
	authority := t.host
	if strings.Contains(authority, ":") {
		authority = "[" + authority + "]"
	}
	if t.port != t.defaultPort() {
		authority += ":" + strconv.Itoa(t.port)
	}
	g := given(p.Headers, t)
	var rest []hpack.HeaderField
	for _, h := range p.Headers {
		k := strings.ToLower(h.Key)
		switch k {
		case "host":
			authority = h.Value
			continue
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue
		}
		rest = append(rest, hpack.HeaderField{Name: k, Value: h.Value})
	}
	scheme := "http"
	if t.tls != nil {
		scheme = "https"
	}
	r := h2Request{body: p.Body, fields: []hpack.HeaderField{
		{Name: ":method", Value: p.Method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority},
		{Name: ":path", Value: t.path},
	}}
	if !g.userAgent {
		r.fields = append(r.fields, hpack.HeaderField{Name: "user-agent", Value: p.UserAgent})
	}
	if !g.accept {
		r.fields = append(r.fields, hpack.HeaderField{Name: "accept", Value: "*/*"})
	}
	r.fields = append(r.fields, rest...)
	if len(p.Body) > 0 {
		if !g.contentType {
			r.fields = append(r.fields, hpack.HeaderField{Name: "content-type", Value: p.ContentType})
		}
		r.fields = append(r.fields, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(p.Body))})
	}
	return r
}

// checkH2Targets refuses a plan whose URLs an HTTP/2 connection cannot
// share: as h2load, every URL names one scheme, host and port.
func checkH2Targets(ts []target) error {
	for i := 1; i < len(ts); i++ {
		if ts[i].addr != ts[0].addr || (ts[i].tls == nil) != (ts[0].tls == nil) {
			return fmt.Errorf("%w: urls[%d]: with http_version 2 every URL must name the scheme, host and port of the first, as h2load", measure.ErrInvalidPlan, i)
		}
	}
	return nil
}

// h2stream is one request in flight on a connection.
type h2stream struct {
	id                 uint32
	ti                 int
	start, connected   time.Time // started; its connection was up
	firstByte          time.Time
	status             int
	final              bool  // the final (non-1xx) header block was seen
	body               int64 // DATA bytes received, padding excluded
	recvUsed           int64 // stream window consumed since the last WINDOW_UPDATE
	sendWin            int64
	sent               int // request body bytes written
	headerSize         int // size of the header list being decoded
	newConn            bool
	handshake          time.Duration // the connection's TLS handshake on its first stream, else -1
	tooLarge, inHeader bool
}

// h2conn is an HTTP/2 connection of one worker: a single goroutine (the
// worker's) writes requests, reads every frame and starts the next request
// as one ends, as h2load's event loop does. Writes are buffered and flushed
// when the read buffer runs dry, so a burst of answers costs one write.
type h2conn struct {
	w  *worker
	fr *http2.Framer
	br *bufio.Reader
	bw *bufio.Writer
	cw countingWriter

	enc    *hpack.Encoder
	encBuf bytes.Buffer
	dec    *hpack.Decoder
	blocks [][]byte // per target: the header block once it is all indexed, reusable
	nEnc   []int    // per target: times encoded on this connection

	streams   map[uint32]*h2stream
	free      []*h2stream
	decoding  *h2stream // the stream whose header block is being decoded
	nextID    uint32
	cap       int   // streams allowed at once
	sendWin   int64 // connection send window
	peerWin   int64 // the server's initial stream window
	frameSize int
	recvUsed  int64
	settled   bool // the server's first SETTINGS arrived
	goaway    bool
	ended     bool // no more requests for this connection
	carried   bool // a request was started on this connection
	// handshake is the connection's TLS handshake (-1 without TLS), counted
	// with the first request it carried, as the HTTP/1 path counts it with
	// the request that opened the connection.
	handshake time.Duration
	connected time.Time
	now       time.Time
	server    string // Server header of the connection's first response
	pending   []*h2stream
}

// countingWriter counts what is written to the connection.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	*c.n += int64(n)
	return n, err
}

func (w *worker) prepareH2() {
	c := &h2conn{w: w, streams: make(map[uint32]*h2stream)}
	c.cw.n = &w.local.sent
	c.br = bufio.NewReaderSize(&w.tc, 32<<10)
	c.bw = bufio.NewWriterSize(&c.cw, 32<<10)
	c.blocks = make([][]byte, len(w.e.targets))
	c.nEnc = make([]int, len(w.e.targets))
	w.h2 = c
}

// runH2 is the closed model on HTTP/2: the worker keeps a connection with
// MaxStreams requests in flight, each next one starting as one ends,
// until the budget or the run ends; a connection lost (GOAWAY, an error) is
// replaced by a new one.
func (w *worker) runH2() {
	e := w.e
	c := w.h2
	for !e.stopped() && (e.plan.Requests == 0 || e.issued.Load() < int64(e.plan.Requests)) {
		start := time.Now()
		if w.local.busyFrom.IsZero() {
			w.local.busyFrom = start
		}
		hs, err := w.connect(0, start)
		if err != nil {
			if !e.take() {
				break
			}
			w.pub.started.Add(1)
			w.fail(stageDial, err)
			continue
		}
		if tc, ok := w.conn.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol != "h2" {
			if !e.take() {
				break
			}
			w.pub.started.Add(1)
			w.failH2(classProtocol, fmt.Errorf("%w: ALPN gave %q", errH2NoALPN, tc.ConnectionState().NegotiatedProtocol))
			w.closeConn()
			continue
		}
		w.local.conns++
		c.handshake = hs
		c.serve(start)
		w.closeConn()
		if !c.carried && e.take() {
			// A server that allows no stream (MAX_CONCURRENT_STREAMS 0)
			// or fails every connection at once must still use up the
			// budget, so the run ends.
			w.pub.started.Add(1)
			w.failH2(classProtocol, errH2NoStream)
		}
	}
	w.local.busyUntil = time.Now()
}

// failH2 counts one failed request of class c outside a stream (the
// connection could not carry one), aborting the run as ab would before
// any success.
func (w *worker) failH2(c class, err error) {
	w.pub.done.Add(1)
	if w.e.stopped() {
		return
	}
	countFailure(&w.local.failures, c)
	w.pub.failed.Add(1)
	w.local.lastEvent = time.Now()
	if w.e.recordTimeline {
		w.recordFailure(c, w.local.lastEvent, time.Time{}, time.Time{}, false)
	}
	if c == classProtocol && !w.e.plan.ContinueOnError && w.e.docLen.Load() < 0 {
		w.e.stop(stopAborted, err.Error())
	}
}

// reset readies the connection state for a new connection.
func (c *h2conn) reset() {
	w := c.w
	c.br.Reset(&w.tc)
	c.cw.w = w.conn
	c.bw.Reset(&c.cw)
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2FrameSize)
	c.encBuf.Reset()
	c.enc = hpack.NewEncoder(&c.encBuf)
	c.dec = hpack.NewDecoder(4096, c.emit)
	c.dec.SetMaxStringLength(HeaderCap)
	for i := range c.blocks {
		c.blocks[i], c.nEnc[i] = nil, 0
	}
	clear(c.streams)
	c.pending = c.pending[:0]
	c.decoding = nil
	c.nextID = 1
	c.cap = min(w.e.plan.MaxStreams, h2EarlyStreams)
	c.sendWin, c.peerWin = h2InitialWin, h2InitialWin
	c.frameSize = h2FrameSize
	c.recvUsed = 0
	c.settled, c.goaway, c.ended, c.carried = false, false, false, false
	c.connected = time.Now()
	c.now = c.connected
	c.server = ""
}

// serve runs one connection until it can carry no more requests: the
// budget or the run ended, the server sent GOAWAY and its streams are
// done, or the connection failed.
func (c *h2conn) serve(start time.Time) {
	w, e := c.w, c.w.e
	c.reset()
	w.tc.arm()
	_, _ = c.bw.WriteString(http2.ClientPreface)
	_ = c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: HeaderCap},
	)
	_ = c.fr.WriteWindowUpdate(0, h2Window-h2InitialWin)
	c.fill(start)
	armed := c.now
	_ = w.conn.SetDeadline(c.now.Add(e.plan.Timeout))
	for {
		if c.br.Buffered() == 0 {
			if err := c.bw.Flush(); err != nil {
				c.lose(classWrite, err)
				return
			}
		}
		if len(c.streams) == 0 && (c.ended || c.goaway) {
			if c.goaway {
				return
			}
			if !c.fill(c.now) {
				_ = c.bw.Flush()
				return
			}
			continue
		}
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.readFailed(err)
			return
		}
		if err := c.handle(f); err != nil {
			c.lose(classProtocol, err)
			return
		}
		if c.now.Sub(armed) > e.plan.Timeout/100 {
			armed = c.now
			_ = w.conn.SetDeadline(c.now.Add(e.plan.Timeout))
			if e.stopped() {
				_ = w.conn.SetDeadline(aLongTimeAgo)
			}
			c.sweep()
		}
	}
}

// fill starts requests at start until the connection carries as many as
// it may; false when it could start none because the budget or run ended.
func (c *h2conn) fill(start time.Time) bool {
	e := c.w.e
	started := false
	if c.nextID >= 1<<31-1 {
		c.goaway = true // stream identifiers ran out: a new connection
	}
	for !c.ended && !c.goaway && len(c.streams) < c.cap {
		if !e.take() {
			c.ended = true
			break
		}
		c.startStream(start)
		started = true
	}
	c.w.local.maxStreams = max(c.w.local.maxStreams, len(c.streams))
	return started
}

func (c *h2conn) startStream(start time.Time) {
	w, e := c.w, c.w.e
	w.pub.started.Add(1)
	ti := 0
	if n := len(e.targets); n > 1 {
		ti = rand.IntN(n)
	}
	var s *h2stream
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
		*s = h2stream{}
	} else {
		s = &h2stream{}
	}
	s.handshake = -1
	if !c.carried {
		s.handshake = c.handshake
	}
	c.carried = true
	s.id, s.ti, s.start = c.nextID, ti, start
	s.connected = start
	if start.Before(c.connected) {
		s.connected, s.newConn = c.connected, true
	}
	s.sendWin = c.peerWin
	c.nextID += 2
	c.streams[s.id] = s
	req := &e.targets[ti].h2
	block := c.headerBlock(ti, req)
	c.writeHeaders(s.id, block, len(req.body) == 0)
	if len(req.body) > 0 {
		c.sendBody(s)
	}
}

// headerBlock encodes target ti's header fields. With one target the block
// is encoded twice per connection, then reused: the second encoding only
// indexes the dynamic table the first one filled, so it leaves the table
// as it is and stays valid for every later request.
func (c *h2conn) headerBlock(ti int, req *h2Request) []byte {
	if b := c.blocks[ti]; b != nil {
		return b
	}
	c.encBuf.Reset()
	for _, f := range req.fields {
		_ = c.enc.WriteField(f)
	}
	c.nEnc[ti]++
	b := c.encBuf.Bytes()
	if c.nEnc[ti] == 2 && len(c.blocks) == 1 {
		c.blocks[ti] = bytes.Clone(b)
		return c.blocks[ti]
	}
	return b
}

func (c *h2conn) writeHeaders(id uint32, block []byte, endStream bool) {
	first := block
	if len(first) > c.frameSize {
		first = block[:c.frameSize]
	}
	rest := block[len(first):]
	_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: endStream, EndHeaders: len(rest) == 0})
	for len(rest) > 0 {
		n := min(len(rest), c.frameSize)
		_ = c.fr.WriteContinuation(id, n == len(rest), rest[:n])
		rest = rest[n:]
	}
}

// sendBody writes as much of s's request body as the windows allow; the
// rest waits for WINDOW_UPDATE.
func (c *h2conn) sendBody(s *h2stream) {
	body := c.w.e.targets[s.ti].h2.body
	for s.sent < len(body) {
		n := int(min(int64(len(body)-s.sent), int64(c.frameSize), s.sendWin, c.sendWin))
		if n <= 0 {
			return
		}
		end := s.sent+n == len(body)
		_ = c.fr.WriteData(s.id, end, body[s.sent:s.sent+n])
		s.sent += n
		s.sendWin -= int64(n)
		c.sendWin -= int64(n)
	}
}

// blocked reports whether s's request body waits on a window.
func (c *h2conn) blocked(s *h2stream) bool {
	return s.sent < len(c.w.e.targets[s.ti].h2.body) && (s.sendWin <= 0 || c.sendWin <= 0)
}

// handle processes one frame; an error is fatal to the connection.
func (c *h2conn) handle(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.DataFrame:
		return c.onData(f)
	case *http2.HeadersFrame:
		return c.onHeaders(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), f.StreamEnded())
	case *http2.ContinuationFrame:
		return c.onHeaders(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), false)
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		if !c.settled {
			c.cap = c.w.e.plan.MaxStreams // unless the server says how many
		}
		if err := f.ForeachSetting(c.onSetting); err != nil {
			return err
		}
		if !c.settled {
			c.settled = true
			c.fill(c.now)
		}
		return c.fr.WriteSettingsAck()
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			c.sendWin += int64(f.Increment)
			for _, s := range c.streams {
				c.sendBody(s)
			}
		} else if s := c.streams[f.StreamID]; s != nil {
			s.sendWin += int64(f.Increment)
			c.sendBody(s)
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			return c.fr.WritePing(true, f.Data)
		}
	case *http2.RSTStreamFrame:
		if s := c.streams[f.StreamID]; s != nil {
			c.code("RST_STREAM", f.ErrCode)
			c.failStream(s, classStreamReset, false)
		}
	case *http2.GoAwayFrame:
		c.code("GOAWAY", f.ErrCode)
		c.goaway = true
		for id, s := range c.streams {
			if id > f.LastStreamID {
				c.failStream(s, classGoAway, false)
			}
		}
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	return nil
}

func (c *h2conn) onSetting(s http2.Setting) error {
	switch s.ID {
	case http2.SettingMaxConcurrentStreams:
		c.cap = min(c.w.e.plan.MaxStreams, int(s.Val))
	case http2.SettingInitialWindowSize:
		delta := int64(s.Val) - c.peerWin
		c.peerWin = int64(s.Val)
		for _, st := range c.streams {
			st.sendWin += delta
			c.sendBody(st)
		}
	case http2.SettingMaxFrameSize:
		c.frameSize = int(s.Val)
	case http2.SettingHeaderTableSize:
		c.enc.SetMaxDynamicTableSize(s.Val)
		for i := range c.blocks {
			c.blocks[i], c.nEnc[i] = nil, 0
		}
	}
	return nil
}

func (c *h2conn) onHeaders(id uint32, frag []byte, ended, endStream bool) error {
	s := c.streams[id]
	if s != nil && s.firstByte.IsZero() {
		c.now = time.Now()
		s.firstByte = c.now
	}
	c.decoding = s
	if s != nil {
		s.inHeader = true
	}
	// Every block is decoded, a reset stream's too: the decoder's table
	// must follow the server's.
	if _, err := c.dec.Write(frag); err != nil {
		if s != nil && errors.Is(err, hpack.ErrStringLength) {
			c.failStream(s, classHeaderTooLarge, true)
		}
		return fmt.Errorf("loadgen: HTTP/2 header block: %w", err)
	}
	if !ended {
		return nil
	}
	c.decoding = nil
	if err := c.dec.Close(); err != nil {
		return fmt.Errorf("loadgen: HTTP/2 header block: %w", err)
	}
	if s == nil {
		return nil
	}
	s.inHeader = false
	if s.tooLarge {
		c.failStream(s, classHeaderTooLarge, true)
		return nil
	}
	if s.status >= 200 || s.status == 0 {
		s.final = true
	} else {
		s.status, s.headerSize = 0, 0 // an interim answer: the final one follows
	}
	if endStream {
		c.end(s)
	}
	return nil
}

// emit sees each decoded header field of the block being decoded.
func (c *h2conn) emit(f hpack.HeaderField) {
	s := c.decoding
	if s == nil {
		return
	}
	s.headerSize += int(f.Size())
	if s.headerSize > HeaderCap {
		s.tooLarge = true
	}
	switch f.Name {
	case ":status":
		if !s.final {
			s.status, _ = strconv.Atoi(f.Value)
		}
	case "server":
		if c.server == "" && c.w.e.docLen.Load() < 0 {
			c.server = f.Value
		}
	}
}

func (c *h2conn) onData(f *http2.DataFrame) error {
	n := int64(f.Length)
	c.recvUsed += n
	if c.recvUsed >= h2Window/2 {
		if err := c.fr.WriteWindowUpdate(0, uint32(c.recvUsed)); err != nil {
			return err
		}
		c.recvUsed = 0
	}
	s := c.streams[f.StreamID]
	if s == nil {
		return nil // a stream already failed or reset: counted, not kept
	}
	s.body += int64(len(f.Data()))
	s.recvUsed += n
	if s.body > c.w.e.plan.MaxBody {
		c.failStream(s, classBodyTooLarge, true)
		return nil
	}
	if f.StreamEnded() {
		c.end(s)
	} else if s.recvUsed >= h2Window/2 {
		_ = c.fr.WriteWindowUpdate(s.id, uint32(s.recvUsed))
		s.recvUsed = 0
	}
	return nil
}

// end completes stream s and starts the next request in its place.
func (c *h2conn) end(s *h2stream) {
	c.now = time.Now()
	delete(c.streams, s.id)
	c.complete(s)
	c.free = append(c.free, s)
	c.fill(c.now)
}

func (c *h2conn) complete(s *h2stream) {
	w, e := c.w, c.w.e
	body := s.body
	doc := e.docLens[s.ti].Load()
	if doc < 0 {
		doc = e.firstOf(s.ti, []byte(c.server), body)
	}
	lengthFailed := false
	if body != doc && !e.plan.AcceptVariableLength {
		w.local.failures.Length++
		w.pub.failed.Add(1)
		lengthFailed = true
	}
	if s.status < 200 || s.status > 299 {
		w.local.non2xx++
	}
	if e.plan.KeepAlive {
		w.local.keepAlive++
	}
	w.local.body += body
	w.local.lastEvent = c.now
	if s.newConn {
		w.local.connectWrite.Record(micros(s.connected.Sub(s.start)))
	}
	r := record{
		connect:     micros(s.connected.Sub(s.start)),
		waiting:     micros(s.firstByte.Sub(s.connected)),
		total:       micros(c.now.Sub(s.start)),
		uncorrected: micros(c.now.Sub(s.start)),
		handshake:   handshakeMicros(s.handshake),
		status:      int32(s.status),
	}
	if e.recordTimeline {
		r.lengthFailed = lengthFailed
		w.stamp(&r, c.now, time.Time{}, time.Time{})
	}
	w.batch = append(w.batch, r)
	w.pub.completed.Add(1)
	if s.status < 200 || s.status > 299 {
		w.pub.non2xx.Add(1) // after completed: a snapshot never has more
	}
	w.pub.done.Add(1)
	w.pub.bytes.Store(w.tc.total)
	if e.plan.RecordSamples {
		w.sample(s.start, s.start, &timing{reused: !s.newConn, connected: s.connected, written: s.connected, firstByte: s.firstByte, done: c.now}, s.status)
	}
	if len(w.batch) == batchSize {
		w.flush()
	}
}

// failStream counts stream s as failed in class cl; reset says that the
// server is to be told (RST_STREAM CANCEL) that its answer is not wanted.
func (c *h2conn) failStream(s *h2stream, cl class, reset bool) {
	w := c.w
	delete(c.streams, s.id)
	if reset {
		_ = c.fr.WriteRSTStream(s.id, http2.ErrCodeCancel)
	}
	if c.decoding == s {
		c.decoding = nil
	}
	w.pub.done.Add(1)
	w.pub.bytes.Store(w.tc.total)
	c.free = append(c.free, s)
	if w.e.stopped() {
		return
	}
	countFailure(&w.local.failures, cl)
	w.pub.failed.Add(1)
	w.local.lastEvent = c.now
	if w.e.recordTimeline {
		w.recordFailure(cl, c.now, time.Time{}, time.Time{}, false)
	}
	if !c.goaway && !s.inHeader {
		c.fill(c.now)
	}
}

// sweep fails the streams older than the timeout, each with RST_STREAM:
// a stream the server forgot must not hold its slot for the whole run.
func (c *h2conn) sweep() {
	limit := c.w.e.plan.Timeout
	for _, s := range c.streams {
		if c.now.Sub(s.start) >= limit && !s.inHeader {
			cl := classTimeout
			if c.blocked(s) {
				cl = classFlowControl
			}
			c.failStream(s, cl, true)
		}
	}
}

// readFailed ends the connection on a read error: a protocol error, a
// timeout of the whole connection, or the server's close.
func (c *h2conn) readFailed(err error) {
	var ce http2.ConnectionError
	var se http2.StreamError
	switch {
	case errors.As(err, &ce), errors.As(err, &se):
		c.lose(classProtocol, err)
	case isTimeout(err):
		c.lose(classTimeout, err)
	case c.goaway && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)):
		c.lose(classGoAway, err)
	default:
		c.lose(classify(stageRead, err), err)
	}
}

// lose fails every stream still in flight in class cl (a stream whose
// body waits on a window fails as a flow-control stall instead of a
// timeout); the connection is done.
func (c *h2conn) lose(cl class, err error) {
	c.now = time.Now()
	c.goaway = true // no new stream on this connection
	if cl == classProtocol {
		var ce http2.ConnectionError
		code := http2.ErrCodeProtocol
		if errors.As(err, &ce) {
			code = http2.ErrCode(ce)
		}
		_ = c.fr.WriteGoAway(c.nextID-2, code, nil)
		_ = c.bw.Flush()
	}
	for _, s := range c.streams {
		sc := cl
		if cl == classTimeout && c.blocked(s) {
			sc = classFlowControl
		}
		c.failStream(s, sc, false)
	}
}

// code counts an HTTP/2 error code the server sent.
func (c *h2conn) code(frame string, code http2.ErrCode) {
	if c.w.e.stopped() {
		return
	}
	m := &c.w.local.h2codes
	if *m == nil {
		*m = make(map[string]int64)
	}
	(*m)[frame+" "+code.String()]++
}
