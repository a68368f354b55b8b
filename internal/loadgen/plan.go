package loadgen

import (
	"context"
	"net"
	"time"
)

// Header is one request header line. Order is kept as given, as ab does.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// DialFunc opens a TCP connection to addr ("host:port"). It is the hook the
// address policy (internal/netguard) plugs into: the engine calls it for every
// new connection, after resolution is up to it.
type DialFunc func(ctx context.Context, addr string) (net.Conn, error)

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

	// KeepAlive reuses connections (ab -k). Without it every request opens
	// its own connection and asks the server to close it, as ab does.
	KeepAlive bool

	// Concurrency is the number of workers in the closed model (ab -c) and
	// the cap on requests in flight in the open model. Zero means 1.
	Concurrency int

	// Requests stops the run after that many requests were started.
	// Duration stops it after that wall time. At least one must be set;
	// with both, whichever comes first ends the run.
	Requests int
	Duration time.Duration

	// Rate > 0 selects the open model: request starts per second at fixed
	// intervals, latency measured from each intended start.
	Rate float64

	Timeout              time.Duration // per request (ab -s); zero means 30s
	AcceptVariableLength bool          // ab -l: no Length failures
	ContinueOnError      bool          // ab -r: never abort on receive errors

	// RecordSamples keeps every request's timings in Measurement.Samples
	// (needed for ab -g). Memory then grows with Requests; off by default.
	RecordSamples bool

	// Dial replaces the engine's dialer; zero means a plain TCP dial.
	Dial DialFunc

	// Progress, if set, is called from one goroutine about every
	// ProgressInterval (zero means 250ms) with a snapshot of the run.
	Progress         func(Snapshot)
	ProgressInterval time.Duration
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
