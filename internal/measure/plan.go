package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Header is one request header line. Order is kept as given, as ab does.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Guard is the address policy of a run; internal/netguard implements it.
// It decides what may be reached while the engine keeps dialing by itself,
// so a guarded run (the service's) and an unguarded one (the CLI's) open
// connections the same way at the same cost.
type Guard interface {
	// Resolve returns the addresses a connection to addr ("host:port" as
	// in the URL) may go to, every one of them admitted. The engine asks
	// once per target and run, before the clock starts, for IP literals
	// too, and never looks the name up again during the run: as ab does,
	// and so that a DNS change mid-run cannot redirect the load.
	Resolve(ctx context.Context, addr string) ([]netip.Addr, error)
	// Admit is asked right before every connect with the address it is
	// about to reach. An error refuses the connection before any packet
	// leaves and aborts the run.
	Admit(addr string, ip netip.Addr) error
}

// Plan is everything one run needs. A zero field means the default noted
// beside it, so a Plan built from ab's flags and one built from a job spec
// behave alike.
type Plan struct {
	// URLs are the request targets; with several, each request picks one at
	// random, as http_load does with its URL file. At least one is required.
	URLs []string

	Method      string   // zero means GET (POST when Body is set)
	Headers     []Header // extra headers; a Host header given here is sent as is
	Body        []byte   // request body, sent with every request
	ContentType string   // Content-Type for Body; zero means text/plain, as ab

	// HTTPVersion is "1.1" (the zero value), "1.0" or "2". With "1.1" fasthttp
	// serializes the request; with "1.0" it is laid out byte for byte as ab
	// sends it (request line, Connection: Keep-Alive only with KeepAlive,
	// the first LeadingHeaders of Headers, Content-length and Content-type
	// for a body, the other Headers, then Host, User-Agent and Accept unless
	// Headers gives them), so byte counts compare with ab's exactly. With
	// "2" the engine speaks HTTP/2 as h2load does: over https negotiated by
	// ALPN "h2", over http as h2c with prior knowledge; Concurrency is then
	// the number of connections (h2load -c) and MaxStreams the streams in
	// flight on each (h2load -m). Connections are always reused.
	HTTPVersion string
	// MaxStreams is how many requests each HTTP/2 connection carries at
	// once (h2load -m), capped by the server's MAX_CONCURRENT_STREAMS;
	// zero means 1. Ignored on HTTP/1.x.
	MaxStreams int
	// LeadingHeaders is how many of Headers come before the body's
	// Content-length on HTTP/1.0: ab sends its -C and -A lines there and -H
	// lines after. Ignored on HTTP/1.1.
	LeadingHeaders int
	// UserAgent is sent unless Headers has a User-Agent; zero means "benchq".
	UserAgent string

	// TLS configures every https:// target of the run; the zero value
	// verifies certificates (see TLS).
	TLS TLS

	// KeepAlive reuses connections (ab -k). Without it every request opens
	// its own connection and asks the server to close it, as ab does.
	KeepAlive bool

	// Concurrency is the number of workers in the closed model (ab -c) and
	// the cap on requests in flight in the open model. Zero means 1.
	Concurrency int

	// Requests stops the run after that many requests: each one ends
	// completed or failed, so Complete + failures not completed == Requests
	// when the run is not stopped early. Duration stops the run after that
	// wall time, discarding requests still in flight, as ab -t does. At
	// least one must be set; with both, whichever comes first ends the run.
	Requests int
	Duration time.Duration

	// Rate > 0 selects the open model: request starts per second at fixed
	// intervals, latency measured from each intended start.
	Rate float64

	Timeout              time.Duration // bounds each request, dial included (ab -s); zero means 30s
	AcceptVariableLength bool          // ab -l: no Length failures
	ContinueOnError      bool          // ab -r: never abort, not even on a refused first connection

	// MaxBody caps each response body, in decoded bytes (after chunked
	// framing); zero means DefaultMaxBody. Bodies are counted as they are
	// read, never kept, so memory does not depend on it: it bounds how long
	// one request may read. A longer body, or a Content-Length above it,
	// fails the request as Failures.BodyTooLarge and closes the connection.
	MaxBody int64

	// StartAt, if set, is when the clock starts: every worker is ready
	// (goroutine, buffers, targets resolved) before it, then the run waits
	// for that instant, so runs on several machines that agreed on one
	// start begin together however long their preparation took. An
	// instant already past starts at once; the caller's context ends the
	// wait.
	StartAt time.Time

	// TimelineInterval is the length of the run's timeline intervals
	// (Measurement.Timeline); zero means DefaultTimelineInterval, and it is
	// at least MinTimelineInterval.
	TimelineInterval time.Duration

	// Warmup loads the target for that long before the measured window,
	// as wrk2 calibrates before it measures: a request that completes or
	// fails in it is counted in the Timeline only, and every other field
	// of the Measurement covers the window after it (Started is the
	// window's start). Duration is the window's length, so the run lasts
	// Warmup + Duration. It needs a Duration and no Requests (a count has
	// no window to start: see Validate) and HTTP/1.x.
	Warmup time.Duration

	// RecordSamples keeps every request's timings in Measurement.Samples
	// (needed for ab -g). Memory then grows with Requests; off by default.
	RecordSamples bool

	// Guard, if set, resolves the targets and admits every connection.
	// Without it names are resolved by the system's resolver, once per
	// run, and every address may be reached.
	Guard Guard

	// Progress, if set, is called from one goroutine about every
	// ProgressInterval (zero means 250ms) with a snapshot of the run.
	Progress         func(Snapshot)
	ProgressInterval time.Duration

	// OnInterval, if set, is called from one goroutine with each interval
	// of the run's timeline once it is closed (ClosedInterval), in order,
	// at most once each: a little after the interval ended while the run
	// goes, the rest when it ends. It must return quickly; it is never
	// called on a request's path, and nothing of the result depends on it.
	OnInterval func(ClosedInterval)
}

// Snapshot is the live state of a run, cheap to read at any time.
type Snapshot struct {
	Elapsed    time.Duration `json:"elapsed"`
	Completed  int64         `json:"completed"`
	Failed     int64         `json:"failed"`
	CurrentRPS float64       `json:"current_rps"` // over the last interval
	InFlight   int64         `json:"in_flight"`
	BytesRead  int64         `json:"bytes_read"`
}

// DefaultMaxBody is the zero Plan.MaxBody: generous for any document a
// benchmark fetches, yet it stops a target that answers without end.
const DefaultMaxBody int64 = 1 << 30

// MaxConcurrency is the sanity cap on Plan.Concurrency: every worker owns a
// goroutine, a connection and its buffers, so a typo must not exhaust memory.
const MaxConcurrency = 100000

// MaxStreams is the cap on Plan.MaxStreams: streams per connection beyond
// it measure the client's bookkeeping rather than the server, and servers
// allow far fewer (nginx 128, Go 250).
const MaxStreams = 1000

// Defaults for zero Plan fields.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultProgressInterval = 250 * time.Millisecond
	DefaultContentType      = "text/plain"
	DefaultUserAgent        = "benchq"
)

// The values of Plan.HTTPVersion.
const (
	HTTP10 = "1.0"
	HTTP11 = "1.1"
	HTTP2  = "2"
)

// HTTPVersions lists every value Plan.HTTPVersion may take besides ""
// (which means HTTP11), oldest first. It is the one list the plan's, the
// spec's and the ab line's validators check against.
func HTTPVersions() []string { return []string{HTTP10, HTTP11, HTTP2} }

// KnownHTTPVersion reports whether v is one of HTTPVersions.
func KnownHTTPVersion(v string) bool { return slices.Contains(HTTPVersions(), v) }

// HTTPVersionChoices names HTTPVersions for a message: "1.0, 1.1 or 2".
func HTTPVersionChoices() string {
	vs := HTTPVersions()
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// ErrInvalidPlan is wrapped by every error of Plan.Validate, and by the
// engine's for a plan that can never run.
var ErrInvalidPlan = errors.New("measure: invalid plan")

// ErrUnreachable is wrapped by the engine's error when a target's host
// cannot be resolved, or the plan's Guard refuses its address (at resolution or at a
// connect): no request of the run was sent anywhere it may not go. The
// resolver's or the guard's own error is wrapped too.
var ErrUnreachable = errors.New("measure: target unreachable")

// Validate reports every problem of the plan at once; each joined error wraps
// ErrInvalidPlan and names the field.
func (p Plan) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalidPlan, field, fmt.Sprintf(format, args...)))
	}
	if len(p.URLs) == 0 {
		bad("urls", "at least one is required")
	}
	for i, raw := range p.URLs {
		if _, err := ParseEndpoint(raw); err != nil {
			bad(fmt.Sprintf("urls[%d]", i), "%v", err)
		}
	}
	if p.Requests < 0 {
		bad("requests", "%d is negative", p.Requests)
	}
	if p.Duration < 0 {
		bad("duration", "%v is negative", p.Duration)
	}
	if p.Requests == 0 && p.Duration == 0 {
		bad("requests", "requests or duration is required, so every run ends")
	}
	if p.Warmup < 0 {
		bad("warmup", "%v is negative", p.Warmup)
	}
	if p.Warmup > 0 && (p.Requests > 0 || p.Duration == 0) {
		bad("warmup", "needs a duration and no request count: the measured window is the duration after the warm-up")
	}
	if p.Warmup > 0 && p.HTTPVersion == HTTP2 {
		bad("warmup", "is not supported on HTTP/2")
	}
	if p.Concurrency < 0 || p.Concurrency > MaxConcurrency {
		bad("concurrency", "%d is outside 0..%d", p.Concurrency, MaxConcurrency)
	}
	if math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0) || p.Rate < 0 {
		bad("rate", "%v is not a non-negative number", p.Rate)
	}
	if p.Timeout < 0 {
		bad("timeout", "%v is negative", p.Timeout)
	}
	if p.MaxBody < 0 {
		bad("max_body", "%d is negative", p.MaxBody)
	}
	if p.TimelineInterval != 0 && p.TimelineInterval < MinTimelineInterval {
		bad("timeline_interval", "%v is below the shortest interval, %v", p.TimelineInterval, MinTimelineInterval)
	}
	if p.ProgressInterval < 0 {
		bad("progress_interval", "%v is negative", p.ProgressInterval)
	}
	if p.Method != "" && !IsToken(p.Method) {
		bad("method", "%q is not an HTTP token", p.Method)
	}
	if m := p.method(); len(p.Body) > 0 && (m == "GET" || m == "HEAD") {
		bad("body", "a body cannot be sent with %s", m)
	}
	if v := p.HTTPVersion; v != "" && !KnownHTTPVersion(v) {
		bad("http_version", "%q is not %s", v, HTTPVersionChoices())
	}
	if p.MaxStreams < 0 || p.MaxStreams > MaxStreams {
		bad("max_streams", "%d is outside 0..%d", p.MaxStreams, MaxStreams)
	}
	if p.HTTPVersion == HTTP2 && p.Rate > 0 {
		bad("rate", "the open model (a rate) is not supported on HTTP/2 yet; use the closed model")
	}
	if p.LeadingHeaders < 0 || p.LeadingHeaders > len(p.Headers) {
		bad("leading_headers", "%d is outside 0..%d (the number of headers)", p.LeadingHeaders, len(p.Headers))
	}
	if strings.ContainsAny(p.UserAgent, "\r\n") {
		bad("user_agent", "%q contains CR or LF", p.UserAgent)
	}
	if strings.ContainsAny(p.ContentType, "\r\n") {
		bad("content_type", "%q contains CR or LF", p.ContentType)
	}
	for i, h := range p.Headers {
		if !IsToken(h.Key) || strings.ContainsAny(h.Value, "\r\n") {
			bad(fmt.Sprintf("headers[%d]", i), "%q is not a valid header line", h.Key+": "+h.Value)
		}
	}
	if _, err := p.TLS.Config(); err != nil {
		errs = append(errs, fmt.Errorf("%w: tls: %w", ErrInvalidPlan, err))
	}
	return errors.Join(errs...)
}

// WithDefaults fills zero fields with their documented defaults.
func (p Plan) WithDefaults() Plan {
	p.Method = p.method()
	if p.Concurrency == 0 {
		p.Concurrency = 1
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultTimeout
	}
	if p.ContentType == "" {
		p.ContentType = DefaultContentType
	}
	if p.HTTPVersion == "" {
		p.HTTPVersion = HTTP11
	}
	if p.MaxStreams == 0 {
		p.MaxStreams = 1
	}
	if p.UserAgent == "" {
		p.UserAgent = DefaultUserAgent
	}
	if p.ProgressInterval == 0 {
		p.ProgressInterval = DefaultProgressInterval
	}
	if p.MaxBody == 0 {
		p.MaxBody = DefaultMaxBody
	}
	return p
}

func (p Plan) method() string {
	switch {
	case p.Method != "":
		return p.Method
	case len(p.Body) > 0:
		return "POST"
	default:
		return "GET"
	}
}

// IsToken reports whether s is a non-empty RFC 9110 token, the syntax of a
// method and of a header name. The job spec and the ab parser check their
// input with it so their errors agree with the plan's.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
