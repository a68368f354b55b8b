package abreport

import (
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// Report is one run's result in ApacheBench's terms: one JSON field per line
// of ab's report, same meaning, units in the field names.
// Durations are milliseconds (or seconds where the name says _s) as floats:
// min, median, max and percentiles are whole microseconds, mean and sd keep
// nanoseconds so http_load's six significant digits survive. Counters are
// exact. A Report carries everything its renderers print, so a stored Report
// renders the same text years later without the measurement.
type Report struct {
	ServerSoftware string `json:"server_software"`
	ServerHostname string `json:"server_hostname"`
	ServerPort     int    `json:"server_port"`
	TLSProtocol    string `json:"tls_protocol,omitempty"`
	Method         string `json:"method"`

	DocumentPath   string `json:"document_path"`
	DocumentLength int64  `json:"document_length"` // body bytes of the first completed response
	VariableLength bool   `json:"variable_length"` // ab -l: "Document Length: Variable", no Length failures

	ConcurrencyLevel int      `json:"concurrency_level"`
	TimeTakenS       float64  `json:"time_taken_s"` // whole microseconds, as ab's clock
	CompleteRequests int64    `json:"complete_requests"`
	FailedRequests   int64    `json:"failed_requests"` // sum of every class in Failed
	Failed           Failures `json:"failed"`
	WriteErrors      int64    `json:"write_errors"`
	Non2xxResponses  int64    `json:"non_2xx_responses"`

	KeepAlive         bool  `json:"keep_alive"` // ab -k: the "Keep-Alive requests" line is printed, even when 0
	KeepAliveRequests int64 `json:"keep_alive_requests"`

	TotalTransferredBytes int64 `json:"total_transferred_bytes"` // headers + bodies received
	HTMLTransferredBytes  int64 `json:"html_transferred_bytes"`  // bodies received
	// BodySent is ab -p/-u: it decides the "Total body sent" and kb/s
	// sent/total lines. TotalBodySentBytes is, as in ab, every byte written
	// (request headers and bodies), and is filled in either way.
	BodySent           bool  `json:"body_sent"`
	TotalBodySentBytes int64 `json:"total_body_sent_bytes"`

	// Rates are 0 when nothing completed or no time passed (ab omits the lines).
	RequestsPerSecond   float64 `json:"requests_per_second"`
	TimePerRequestMs    float64 `json:"time_per_request_ms"`     // concurrency × time / complete
	TimePerRequestAllMs float64 `json:"time_per_request_all_ms"` // time / complete
	TransferRateKbps    float64 `json:"transfer_rate_kbps"`      // KiB received per second
	SentRateKbps        float64 `json:"sent_rate_kbps"`          // KiB written per second
	TotalRateKbps       float64 `json:"total_rate_kbps"`         // both

	ConnectionTimesMs ConnectionTimes `json:"connection_times_ms"`
	// PercentilesMs is ab's "Percentage of the requests served within a
	// certain time" over the total time.
	PercentilesMs Percentiles `json:"percentiles_ms"`
	// StatusCodes counts responses per HTTP status, http_load's "HTTP
	// response codes"; JSON keys are the codes as strings ("200").
	StatusCodes map[int]int64 `json:"status_codes"`
	// LatencyHistogram is the total-time HdrHistogram (µs) in its V2
	// compressed, base64 encoding; DecodeHistogram reads it back, and
	// histograms of several runs merge exactly.
	LatencyHistogram string `json:"latency_histogram"`

	// MaxParallel is http_load's "max parallel": the most requests seen in
	// flight at once, where ConcurrencyLevel is the most allowed. 0 in
	// reports stored before it was measured.
	MaxParallel int64 `json:"max_parallel"`
	// ConnectToWriteMs is http_load's "msecs/connect" over the connections
	// opened: from the start of the dial until the request is written (the
	// Connect row stops at the dial and TLS handshake and counts reused
	// connections as 0). Nil when no connection was measured.
	ConnectToWriteMs *MinMeanMax `json:"connect_to_write_ms,omitempty"`

	OpenModel *OpenModel `json:"open_model,omitempty"`
	Aborted   string     `json:"aborted,omitempty"`  // why the run stopped where ab would have
	Canceled  bool       `json:"canceled,omitempty"` // the caller stopped the run; counts are partial
	Hints     []string   `json:"hints,omitempty"`    // one line of advice per failure class seen
	StartedAt time.Time  `json:"started_at"`

	// The load generator's own CPU over the run, process-wide (the
	// all-in-one service's API and Redis share it), so a reader knows
	// whether req/s measured the server or the client. The fields come
	// last so CSV columns built from this struct keep their positions.

	// ClientCPUS is the CPU time the benchq process used (user + system).
	ClientCPUS float64 `json:"client_cpu_s"`
	// ClientCPUWaitS is the time its threads were ready to run but waited
	// for a CPU (summed over threads): other processes crowding it out.
	ClientCPUWaitS float64 `json:"client_cpu_wait_s"`
	// ClientSpinS is the part of client_cpu_s spent spinning on reads
	// that had no data yet, which the engine does only when each worker
	// has a core to itself: waiting, not work.
	ClientSpinS float64 `json:"client_spin_s"`
	// ClientCores is the cores it could run on: GOMAXPROCS capped by the
	// CPU affinity mask; 0 where the system does not tell (outside Linux).
	ClientCores int `json:"client_cores"`
	// ClientSaturated is set when client_cpu_s + client_cpu_wait_s −
	// client_spin_s ≥ 90 %
	// of time_taken_s × min(client_cores, concurrency_level): the load
	// generator was short of CPU and req/s measures it, not the server. A
	// c = 1 run can keep only one core busy, so one pegged core of two is
	// its limit. The client must also have used half a core itself, and
	// a run shorter than 250 ms, or one in which no request succeeded, is
	// never marked: ClientUnjudged says why.
	ClientSaturated bool `json:"client_saturated"`
	// ClientUnjudged says why client_saturated could not be judged (the
	// run too short to tell, no request succeeded, the system does not
	// report CPU); absent when it was.
	ClientUnjudged string `json:"client_unjudged,omitempty"`

	// TLSHandshakes is how many TLS connections the completed requests
	// opened, and TLSHandshakeMs their handshakes' times: a part of
	// connection_times_ms.connect, which ab's table keeps whole. Nil for
	// plain HTTP.
	TLSHandshakes  int64       `json:"tls_handshakes,omitempty"`
	TLSHandshakeMs *PhaseStats `json:"tls_handshake_ms,omitempty"`
	// TLSFailures names the reason of each failed.tls_handshake; nil when
	// none failed.
	TLSFailures *TLSFailures `json:"tls_failures,omitempty"`

	// HTTP/2 runs only (h2load's -c and -m): http_version "2", the
	// connections opened (concurrency_level at first, more after GOAWAY or
	// a lost connection), the most streams one connection carried at once,
	// and the error codes of resets and GOAWAYs the server sent.
	HTTPVersion  string           `json:"http_version,omitempty"`
	Connections  int64            `json:"connections,omitempty"`
	MaxStreams   int              `json:"max_streams,omitempty"`
	H2ErrorCodes map[string]int64 `json:"h2_error_codes,omitempty"`

	// Unsteady is set when the run's throughput or latency shifted while
	// it was measured (measure.Measurement.Unsteady's rule over its
	// timeline): its averages then mix two behaviours. UnsteadyReason says
	// which metric moved, how much and when.
	Unsteady       bool   `json:"unsteady,omitempty"`
	UnsteadyReason string `json:"unsteady_reason,omitempty"`
}

// TLSFailures splits failed.tls_handshake by reason: unknown_authority
// (no trusted CA signed the certificate), bad_certificate (expired or for
// another name), client_certificate (the server refused or wanted one),
// protocol_version (no common TLS version), handshake_failure (no common
// cipher suite or curve), not_tls (the port answered plain HTTP), other.
// It is the engine's own measure.TLSFailures, as Failures is.
type TLSFailures = measure.TLSFailures

// Failures splits failed_requests by class; it is the engine's own
// measure.Failures (see there for each class), so a report carries the
// measurement's counts as they are, under the same JSON names. ab has
// Connect, Receive, Length and Exceptions; the other classes are benchq's
// (ab aborts on a timeout, counts a port exhaustion as Connect and gives
// up on a TLS handshake; it has no body cap, and stalls on a header above
// its 8 KB buffer until its timeout).
type Failures = measure.Failures

// ConnectionTimes is ab's "Connection Times (ms)" table, one row per phase.
type ConnectionTimes struct {
	Connect    PhaseStats `json:"connect"`
	Processing PhaseStats `json:"processing"`
	Waiting    PhaseStats `json:"waiting"`
	Total      PhaseStats `json:"total"`
}

// PhaseStats is one row of the table, in milliseconds. Mean is exact and SD
// the sample standard deviation (n-1); Median is the textbook median, from
// the phase's histogram.
type PhaseStats struct {
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// MinMeanMax is a timing that http_load summarises by mean, max and min, in
// milliseconds; Mean is exact.
type MinMeanMax struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// Percentiles are ab's nine percentile lines, in milliseconds. A struct, not
// a map, so the JSON keeps ab's order.
type Percentiles struct {
	P50  float64 `json:"50"`
	P66  float64 `json:"66"`
	P75  float64 `json:"75"`
	P80  float64 `json:"80"`
	P90  float64 `json:"90"`
	P95  float64 `json:"95"`
	P98  float64 `json:"98"`
	P99  float64 `json:"99"`
	P100 float64 `json:"100"`
}

// abPercents are the percentages ab prints, in its order.
func abPercents() [9]int { return [9]int{50, 66, 75, 80, 90, 95, 98, 99, 100} }

// At returns the value for one of ab's percentages (50, 66, 75, 80, 90, 95,
// 98, 99, 100); ok is false for any other.
func (p Percentiles) At(percent int) (ms float64, ok bool) {
	for i, pc := range abPercents() {
		if pc == percent {
			return p.values()[i], true
		}
	}
	return 0, false
}

func (p Percentiles) values() [9]float64 {
	return [9]float64{p.P50, p.P66, p.P75, p.P80, p.P90, p.P95, p.P98, p.P99, p.P100}
}

func percentilesFrom(v [9]float64) Percentiles {
	return Percentiles{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]}
}

// OpenModel reports how well an open-model run (a fixed rate of request
// starts) held its rate. The report's own latencies are then measured from
// each request's intended start (coordinated omission corrected, as wrk2);
// UncorrectedPercentilesMs are measured from the actual start, comparable
// with closed-model tools.
type OpenModel struct {
	RequestedRate            float64     `json:"requested_rate"` // starts per second
	AchievedRate             float64     `json:"achieved_rate"`
	LateStarts               int64       `json:"late_starts"` // starts more than 1 ms behind schedule
	UncorrectedPercentilesMs Percentiles `json:"uncorrected_percentiles_ms"`
	// SendLagMs is the pacing error: how long after its intended start
	// each request that completed or failed actually started. A ramp's
	// or a rate's latencies can be trusted to the extent this is small
	// next to them. Nil in reports of runs measured before it was.
	SendLagMs *SendLag `json:"send_lag_ms,omitempty"`
}

// SendLag summarises the open model's send lag in ms, whole microseconds.
type SendLag struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Options carries what a Measurement does not know about the command line.
// Both are explicit rather than guessed: a PATCH with -p sends a body, a POST
// without one does not, so the method cannot tell.
type Options struct {
	VariableLength bool // ab -l
	BodySent       bool // ab -p or -u
}
