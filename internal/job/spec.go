package job

import "github.com/benchq/benchq/internal/monitor"

// Spec is a benchmark job as a client submits it. Every
// field but the targets has a default, filled by WithDefaults.
type Spec struct {
	Name    string            `json:"name,omitempty"`
	Labels  map[string]string `json:"labels,omitempty" maxItems:"32"`
	Targets []Target          `json:"targets" maxItems:"256"`
	Request Request           `json:"request,omitzero"`
	Sweep   Sweep             `json:"sweep"`
	// Baseline compares every other target with this one; Comparisons
	// names further pairs (see ComparisonPairs).
	Baseline    string           `json:"baseline,omitempty"`
	Comparisons []ComparisonPair `json:"comparisons,omitempty" maxItems:"64"`
	// Thresholds are judged on every point's mean at the job's end (the
	// verdict). Each is a string, "p99_ms < 200", or an object that also
	// marks it to end a run once it is certainly broken: {"threshold":
	// "failed_ratio < 0.01", "abort": true, "abort_after": 200} (see
	// ThresholdEntry).
	Thresholds []ThresholdEntry `json:"thresholds,omitempty" maxItems:"100"`
	// Trend holds each cell to the median of the same cell in the last
	// jobs of the job's template (see Trend).
	Trend *Trend `json:"trend,omitempty"`
	// ChangePoints tunes the change points found over the history of the
	// job's template (see ChangePointOptions).
	ChangePoints *ChangePointOptions `json:"change_points,omitempty"`
	// AllowNoSuccess, set, lets a run in which no request succeeded
	// (completed with a 2xx status and the expected body length) pass.
	// Unset, such a run fails the verdict as threshold "no_success", also
	// in a spec without thresholds: set it only to measure a failure path
	// on purpose (a load shedder answering 503, say).
	AllowNoSuccess bool `json:"allow_no_success,omitempty"`
	// CompareTo names the job that thresholds' "baseline.<metric>" refers
	// to (see CompareTo).
	CompareTo *CompareTo `json:"compare_to,omitempty"`
	Webhook   *Webhook   `json:"webhook,omitempty"`
	// Notify sends the job's status, and for a pull or merge request its
	// result table, back to the forge the measured commit lives on (see
	// Notify). A job a CI trigger started carries it from the event.
	Notify *Notify `json:"notify,omitempty"`
	// Exclusive (default true) keeps every other exclusive job off this
	// job's target hosts while it runs: two loads on one host:port skew
	// each other's numbers, and neither result would show it. A host is a
	// target URL's host:port as written (host lowercased, port 80 or 443
	// by default; names are not resolved). A job whose host another job
	// holds stays queued, with queued_reason saying which, and starts
	// when the host is free. false lets the job share its hosts with
	// other jobs that say false, for a target meant to take several loads
	// at once; it still waits while an exclusive job holds one.
	Exclusive *bool `json:"exclusive,omitempty" example:"true"`
	// Timeline sets the interval of every run's timeline (see Timeline).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Warmup loads the target for that long at the start of every run
	// before the run is measured, as wrk2 calibrates first: the result
	// covers the measured window after it (the point's duration), the
	// run's timeline keeps both. Every point needs a duration and no
	// request count, over HTTP/1.x. Unlike sweep.warmup_requests (a
	// separate, discarded run before each run) it warms the very
	// connections and server state the run measures.
	Warmup Duration `json:"warmup,omitempty" example:"5s"`
	// Stages make every run a ramp, as k6's ramping executors do: each
	// stage takes the rate (the open model) or the number of connections
	// (the closed model) linearly from the previous stage's value, zero
	// before the first, to its own over its duration; a run lasts the
	// stages' sum (see Stage). A connection the ramp no longer needs
	// finishes its request in flight, then closes. Not with
	// sweep.requests, duration or rate (nor concurrency, for concurrency
	// stages), warmup, shards or HTTP/2.
	Stages []Stage `json:"stages,omitempty" maxItems:"64"`
	// Search, set, finds each target's capacity under an SLO after the
	// sweep (see Search).
	Search *Search `json:"search,omitempty"`
}

// Target is one system under test. Exactly one of URL, AB (an ab command
// line) or HTTPLoad (http_load flags, with URLs) describes it. An ab line
// brings its request options (-m -i -H -C -A -T -k -s -l -r) and its -c,
// -n and -t, which apply where the job's sweep lists no values (see
// Spec.Points); flags that touch the worker's files or network (-p -u -e -g
// -E -X, --cacert, --urls) are refused. An http_load line brings -parallel, -fetches,
// -seconds and -rate the same way; its URLs are listed in URLs.
type Target struct {
	Name     string   `json:"name,omitempty"`
	URL      string   `json:"url,omitempty"`
	AB       string   `json:"ab,omitempty"`
	HTTPLoad string   `json:"http_load,omitempty"`
	URLs     []string `json:"urls,omitempty" maxItems:"10000"`
	// Request replaces the job-wide request options for this target, as a
	// whole. On an ab target only its body, content_type (ab would read the
	// body from a file), http_version, max_streams, max_body and tls may be
	// set (the line's --max-body and --max-streams win, its -f, -Z,
	// --insecure and --sni over tls).
	Request *Request `json:"request,omitempty"`
	// Monitor names the server's Prometheus metrics endpoint: scraped at
	// each run's start, every timeline interval and its end, so the run
	// stores the server's CPU and memory (`server`) beside the client's
	// numbers.
	Monitor *monitor.Spec `json:"monitor,omitempty"`
}

// Request holds the options of every request sent to a target.
type Request struct {
	Method               string            `json:"method,omitempty"`
	Headers              map[string]string `json:"headers,omitempty" maxItems:"100"`
	Body                 string            `json:"body,omitempty"`
	ContentType          string            `json:"content_type,omitempty"`
	KeepAlive            bool              `json:"keepalive"`
	Timeout              Duration          `json:"timeout,omitempty"`
	AcceptVariableLength bool              `json:"accept_variable_length"`
	// HTTPVersion is "1.0", "1.1" or "2". Unset, a url or http_load target
	// sends HTTP/1.1 and an ab target ab's own HTTP/1.0 request. "2" is
	// HTTP/2 as h2load speaks it: ALPN h2 over https, h2c with prior
	// knowledge over http; concurrency is then connections, always kept.
	HTTPVersion string `json:"http_version,omitempty" enums:"1.0,1.1,2"`
	// MaxStreams is, with http_version "2", how many requests each
	// connection carries at once (h2load -m), capped by the server's
	// MAX_CONCURRENT_STREAMS; default 1.
	MaxStreams int `json:"max_streams,omitempty" minimum:"1" maximum:"1000" example:"10"`
	// MaxBody caps each response body, in bytes after chunked decoding
	// (default 1 GiB). Bodies are counted, never kept, so the cap bounds
	// how long one request may read, not memory: a longer body is cut,
	// its connection closed, and the request counted as failed
	// (failed.body_too_large).
	MaxBody int64 `json:"max_body,omitempty" minimum:"1" example:"1073741824"`
	// TLS configures https:// targets; unset, certificates are verified.
	TLS *TLSOptions `json:"tls,omitempty"`
}

// Sweep lists the values each dimension of the job takes. The points are
// the cross product targets × concurrency × (requests | duration | rate).
type Sweep struct {
	Concurrency []int      `json:"concurrency,omitempty" maxItems:"64"`
	Requests    []int      `json:"requests,omitempty" maxItems:"64"`
	Duration    []Duration `json:"duration,omitempty" maxItems:"64"`
	// Rate lists open-model rates, request starts per second: a number
	// (1000), or a string "FROM:TO" ("100:5000") for a rate that ramps
	// linearly from FROM to TO over the run's duration (sweep.duration is
	// then required). Start i of a ramp is due when the rate's integral
	// reaches i, exactly, not in steps.
	Rate             []Rate   `json:"rate,omitempty" maxItems:"64" swaggertype:"array,string" example:"100:5000"`
	Repeats          int      `json:"repeats,omitempty"`
	WarmupRequests   int      `json:"warmup_requests,omitempty"`
	PauseBetweenRuns Duration `json:"pause_between_runs,omitempty"`
	// Settle makes each run of a monitored target wait, right before its
	// load, until the server keeps less than SettleBelow of its cores busy
	// (default 0.1), for at most this long; the run records the wait in
	// server.settled. A run that ends with requests in flight leaves them
	// queued at the server, which the next run would otherwise measure.
	Settle      Duration `json:"settle,omitempty" example:"60s"`
	SettleBelow float64  `json:"settle_below,omitempty" minimum:"0" maximum:"1" example:"0.1"`
	Order       Order    `json:"order,omitempty"`
	// Shards runs every run on this many worker processes at once, each
	// sending its share of the point's concurrency, requests and rate
	// (ShardPlan), started together and merged into one result (default
	// 1: one worker).
	Shards int `json:"shards,omitempty" minimum:"1" maximum:"64" example:"1"`
}

// Order is the sequence in which runs are executed.
type Order string

const (
	// OrderInterleaved runs repeat k of every point before repeat k+1, so
	// drift on the load machine hits all targets alike.
	OrderInterleaved Order = "interleaved"
	// OrderSequential runs all repeats of a point before the next point.
	OrderSequential Order = "sequential"
)

// Webhook asks for a signed callback when the job ends.
type Webhook struct {
	URL    string   `json:"url"`
	Events []string `json:"events,omitempty" maxItems:"16"`
}
