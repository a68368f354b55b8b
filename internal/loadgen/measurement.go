package loadgen

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Measurement is the outcome of one run: what ab would print, in raw units
// (bytes, microseconds), before any formatting. Failures of the target are
// counted here; only a broken engine returns an error from Run.
type Measurement struct {
	// From the first response, as ab reports them.
	ServerSoftware string
	ServerHostname string
	ServerPort     int
	DocumentPath   string
	DocumentLength int64 // body bytes of the first completed response
	TLSProtocol    string

	Concurrency int
	KeepAlive   bool
	Method      string
	Started     time.Time
	Elapsed     time.Duration // ab's "Time taken for tests"

	Complete          int64
	Failed            int64 // ab's "Failed requests": sum of the classes below
	Failures          Failures
	WriteErrors       int64
	Non2xx            int64
	KeepAliveRequests int64 // responses completed on a reused connection

	TotalReceivedBytes int64 // headers + bodies
	BodyReceivedBytes  int64
	TotalSentBytes     int64 // request headers + bodies

	StatusCodes map[int]int64

	// Per-phase timings of completed requests, in microseconds.
	Connect    Phase
	Processing Phase
	Waiting    Phase
	Total      Phase

	// Open is set for runs in the open model (Plan.Rate > 0). Total then
	// holds latency from the intended start (coordinated-omission corrected).
	Open *OpenModel

	// Aborted names why the run stopped early where ab would have stopped
	// (e.g. connection refused before any success without -r); empty otherwise.
	Aborted string

	// Samples holds each completed request's timings when Plan.RecordSamples.
	Samples []Sample
}

// Failures classifies failed requests. Connect, Receive, Length and
// Exceptions are ab's four; Timeout and PortExhaustion are their own classes
// (each with a hint for the user) and are included in Measurement.Failed.
type Failures struct {
	Connect        int64 `json:"connect"`
	Receive        int64 `json:"receive"`
	Length         int64 `json:"length"`
	Exceptions     int64 `json:"exceptions"`
	Timeout        int64 `json:"timeout"`
	PortExhaustion int64 `json:"port_exhaustion"`
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
	LateStarts    int64   // requests that started later than intended
	// Uncorrected is the latency measured from the actual start, for
	// comparison with closed-model tools.
	Uncorrected Phase
}

// Sample is one completed request, kept only with Plan.RecordSamples.
type Sample struct {
	Start      time.Time
	Connect    time.Duration
	Processing time.Duration
	Waiting    time.Duration
	Total      time.Duration
	Status     int
}
