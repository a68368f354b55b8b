package measure

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Measurement is the outcome of one run: what ab would print, in raw units
// (bytes, microseconds), before any formatting. Failures of the target are
// counted here; only a broken engine returns an error from its Run.
type Measurement struct {
	// From the first response, as ab reports them.
	ServerSoftware string
	ServerHostname string
	ServerPort     int
	DocumentPath   string
	DocumentLength int64 // body bytes of the first completed response
	TLSProtocol    string

	Concurrency int
	// HTTPVersion is "2" for an HTTP/2 run, empty otherwise. On HTTP/2,
	// Connections counts the connections opened (Concurrency at first, more
	// after a GOAWAY or a connection error) and MaxStreams the most streams
	// a connection carried at once as allowed: the plan's, capped by the
	// server's MAX_CONCURRENT_STREAMS. Both are zero on HTTP/1.x.
	HTTPVersion string
	Connections int64
	MaxStreams  int
	// H2ErrorCodes counts the HTTP/2 error codes of the streams reset
	// (key "RST_STREAM CANCEL") and connections closed (key "GOAWAY
	// NO_ERROR") by the server; nil on HTTP/1.x.
	H2ErrorCodes map[string]int64
	KeepAlive    bool
	Method       string
	Started      time.Time
	Elapsed      time.Duration // ab's "Time taken for tests": to the last completion, or to the stop of a timed or canceled run
	// Warmup is how long the run loaded the target before Started
	// (Plan.Warmup): the Timeline covers it, nothing else does.
	Warmup time.Duration

	Complete          int64
	Failed            int64 // ab's "Failed requests": sum of the classes below
	Failures          Failures
	Non2xx            int64
	WriteErrors       int64 // requests whose write failed; also counted in Failures.Exceptions
	KeepAliveRequests int64 // responses completed with the connection kept alive (ab counts the first one too)

	TotalReceivedBytes int64 // headers + bodies
	BodyReceivedBytes  int64
	TotalSentBytes     int64 // request headers + bodies

	StatusCodes map[int]int64

	// Per-phase timings of completed requests, in microseconds, as ab's
	// "Connection Times": Connect is the dial (and TLS handshake; 0 on a
	// reused connection), Waiting from the request written to the first
	// response byte, Total from the start to the response complete (for a
	// closing connection, to the server's close, as ab), Processing is
	// Total - Connect.
	Connect    Phase
	Processing Phase
	Waiting    Phase
	Total      Phase

	// MaxInFlight is the most requests seen in flight at once, http_load's
	// "max parallel": at most Concurrency, fewer when the budget is smaller
	// or the workers never overlapped. In the closed model a worker is
	// counted busy from its first start until it runs out of work, as its
	// requests follow each other without a gap; in the open model, where
	// workers wait between requests, each start counts the requests in
	// flight.
	MaxInFlight int64

	// ConnectToWrite is http_load's "msecs/connect" for the completed
	// requests that opened a connection: from the start of the dial until
	// the request is written (ab's Connect stops at the dial and TLS
	// handshake). No histogram: http_load prints mean, max and min only.
	ConnectToWrite Phase

	// Handshake is the TLS handshake of each connection opened by a
	// completed request, from the TCP connection up to the handshake's
	// end (a part of Connect, which ab's table keeps whole). Empty for
	// plain HTTP.
	Handshake Phase
	// TLSFailures names the reason of every failed handshake
	// (Failures.TLSHandshake).
	TLSFailures TLSFailures

	// Open is set for runs in the open model (Plan.Rate > 0). Total then
	// holds latency from the intended start (coordinated-omission corrected);
	// Connect, Waiting and Processing stay measured from the actual start.
	Open *OpenModel

	// Aborted names why the run stopped early where ab would have stopped
	// (e.g. connection refused before any success without -r); empty otherwise.
	Aborted string
	// Canceled is set when the caller's context stopped the run: the
	// measurement then holds what completed before.
	Canceled bool
	// Stopped is what the Plan's Watch answered when it ended the run
	// early; empty when it did not. The measurement then holds what
	// completed before.
	Stopped string

	// Timeline is the run interval by interval (see Timeline); nil for a
	// measurement stored before runs kept one.
	Timeline *Timeline

	// Samples holds each completed request's timings when Plan.RecordSamples.
	Samples []Sample

	// The load generator's own use of its CPUs from the start of the load
	// to the last worker's exit, process-wide (the all-in-one service's
	// API and Redis share the process): ClientCPU is user + system time,
	// ClientCPUWait the time its threads were ready to run but waited for
	// a CPU, ClientCores the cores it could run on (GOMAXPROCS capped by
	// the affinity mask). All three are zero where the system does not
	// tell (outside Linux). ClientSaturated applies the one rule for a
	// client-bound run: CPU + wait ≥ 90 % of Elapsed × min(ClientCores,
	// Concurrency).
	ClientCPU     time.Duration
	ClientCPUWait time.Duration
	// ClientSpin is the part of ClientCPU spent spinning on reads before
	// they would wait (only when every worker has a core of its own).
	ClientSpin  time.Duration
	ClientCores int
}

// Failures classifies failed requests. Connect, Receive, Length and
// Exceptions are ab's four; Timeout, PortExhaustion, TLSHandshake,
// BodyTooLarge (a body above Plan.MaxBody) and HeaderTooLarge (a header
// above the engine's header cap, ab's 8 KiB) are their own classes (each
// with a hint for the user) and are included in Measurement.Failed. The
// last four are HTTP/2's: StreamReset a stream the server reset
// (RST_STREAM), GoAway a stream the server's GOAWAY left unprocessed,
// FlowControl a stream whose request body waited on a zero flow-control
// window until its timeout, Protocol a stream lost to an HTTP/2 protocol
// error (a malformed frame, no "h2" from ALPN).
type Failures struct {
	Connect        int64 `json:"connect"`
	Receive        int64 `json:"receive"`
	Length         int64 `json:"length"`
	Exceptions     int64 `json:"exceptions"`
	Timeout        int64 `json:"timeout"`
	PortExhaustion int64 `json:"port_exhaustion"`
	TLSHandshake   int64 `json:"tls_handshake"`
	BodyTooLarge   int64 `json:"body_too_large"`
	HeaderTooLarge int64 `json:"header_too_large"`
	// HTTP/2's classes: a stream the server reset (RST_STREAM), one its
	// GOAWAY left unprocessed, a request body stalled on a zero
	// flow-control window, an HTTP/2 protocol error.
	StreamReset int64 `json:"stream_reset,omitempty"`
	GoAway      int64 `json:"goaway,omitempty"`
	FlowControl int64 `json:"flow_control,omitempty"`
	Protocol    int64 `json:"protocol,omitempty"`
}

// Phase summarises one timing row of ab's "Connection Times" table.
// Min, Max and the running sums are exact; Hist gives the median and
// percentiles and merges exactly across workers and runs.
type Phase struct {
	Count int64
	Sum   int64   // µs
	SumSq float64 // µs²
	Min   int64   // µs
	Max   int64   // µs
	Hist  *hdrhistogram.Histogram
}

// OpenModel reports how well the requested rate was held.
type OpenModel struct {
	RequestedRate float64 // starts per second asked for
	AchievedRate  float64 // starts per second achieved
	LateStarts    int64   // requests that started more than 1 ms after their intended start
	// Uncorrected is the latency measured from the actual start, for
	// comparison with closed-model tools.
	Uncorrected Phase
	// SendLag is the pacing error of every measured request that completed
	// or failed: its actual start minus its intended start, in µs (a start
	// is never early, so never negative). Requests the run's end cut short
	// are not in it, as in Total. Empty in measurements stored before it
	// was measured.
	SendLag Phase
}

// Sample is one completed request, kept only with Plan.RecordSamples.
type Sample struct {
	Start      time.Time // the actual start
	Connect    time.Duration
	Processing time.Duration
	Waiting    time.Duration
	Total      time.Duration
	Status     int
}

// Merge adds o, measured in parallel with m (a shard of the same point), to
// m: counters, status codes and histograms add exactly; Started is the
// earlier, Elapsed spans from there to the later end (the longer of the
// two when they started together; shards started at one agreed instant
// still start microseconds apart, and ab's "Time taken" covers every
// request), Concurrency, MaxInFlight, rates and the
// client's CPU time and cores add (each shard ran on its own cores). The first
// response's fields are m's unless m has none. Callers that merge sequential
// runs aggregate Elapsed and Concurrency themselves.
func (m *Measurement) Merge(o *Measurement) {
	if o == nil {
		return
	}
	if m.Complete == 0 && m.ServerSoftware == "" && m.DocumentPath == "" {
		m.ServerSoftware, m.ServerHostname, m.ServerPort = o.ServerSoftware, o.ServerHostname, o.ServerPort
		m.DocumentPath, m.DocumentLength, m.TLSProtocol = o.DocumentPath, o.DocumentLength, o.TLSProtocol
		m.Method, m.KeepAlive = o.Method, o.KeepAlive
	}
	// On the wall clock: a decoded measurement has no monotonic reading,
	// and a merge must not depend on whether its parts were decoded.
	end := m.Started.Round(0).Add(m.Elapsed)
	if oEnd := o.Started.Round(0).Add(o.Elapsed); m.Started.IsZero() || oEnd.After(end) {
		end = oEnd
	}
	if m.Started.IsZero() || (!o.Started.IsZero() && o.Started.Before(m.Started)) {
		m.Started = o.Started
	}
	switch {
	case m.Started.IsZero() || o.Started.IsZero(): // no clock to span: measured alone
		m.Elapsed = max(m.Elapsed, o.Elapsed)
	default:
		m.Elapsed = end.Sub(m.Started.Round(0))
	}
	m.Concurrency += o.Concurrency
	m.Warmup = max(m.Warmup, o.Warmup)
	if m.HTTPVersion == "" {
		m.HTTPVersion = o.HTTPVersion
	}
	m.Connections += o.Connections
	m.MaxStreams = max(m.MaxStreams, o.MaxStreams)
	for k, n := range o.H2ErrorCodes {
		if m.H2ErrorCodes == nil {
			m.H2ErrorCodes = make(map[string]int64)
		}
		m.H2ErrorCodes[k] += n
	}
	m.Complete += o.Complete
	m.Failed += o.Failed
	m.Failures.Merge(o.Failures)
	m.WriteErrors += o.WriteErrors
	m.Non2xx += o.Non2xx
	m.KeepAliveRequests += o.KeepAliveRequests
	m.TotalReceivedBytes += o.TotalReceivedBytes
	m.BodyReceivedBytes += o.BodyReceivedBytes
	m.TotalSentBytes += o.TotalSentBytes
	for code, n := range o.StatusCodes {
		if m.StatusCodes == nil {
			m.StatusCodes = make(map[int]int64)
		}
		m.StatusCodes[code] += n
	}
	m.Connect.Merge(&o.Connect)
	m.Processing.Merge(&o.Processing)
	m.Waiting.Merge(&o.Waiting)
	m.Total.Merge(&o.Total)
	m.MaxInFlight += o.MaxInFlight
	m.ConnectToWrite.Merge(&o.ConnectToWrite)
	m.Handshake.Merge(&o.Handshake)
	m.TLSFailures.Merge(o.TLSFailures)
	m.mergeOpen(o.Open)
	if m.Aborted == "" {
		m.Aborted = o.Aborted
	}
	m.Canceled = m.Canceled || o.Canceled
	if m.Stopped == "" {
		m.Stopped = o.Stopped
	}
	m.Samples = append(m.Samples, o.Samples...)
	if o.Timeline != nil && o.Timeline.Interval > 0 {
		if m.Timeline == nil {
			m.Timeline = &Timeline{}
		}
		m.Timeline.Merge(o.Timeline)
	}
	m.ClientCPU += o.ClientCPU
	m.ClientCPUWait += o.ClientCPUWait
	m.ClientSpin += o.ClientSpin
	m.ClientCores += o.ClientCores
}

func (m *Measurement) mergeOpen(o *OpenModel) {
	if o == nil {
		return
	}
	if m.Open == nil {
		m.Open = &OpenModel{}
	}
	m.Open.RequestedRate += o.RequestedRate
	m.Open.AchievedRate += o.AchievedRate
	m.Open.LateStarts += o.LateStarts
	m.Open.Uncorrected.Merge(&o.Uncorrected)
	m.Open.SendLag.Merge(&o.SendLag)
}
