// Package loadgen is benchq's load engine: given a measure.Plan it drives
// HTTP load with fasthttp (HTTP/2 with golang.org/x/net/http2's framer,
// one goroutine per connection, h2.go) in ab's closed model (c workers, n requests or a
// time limit) or in an open model (a fixed rate of request starts), and
// returns one measure.Measurement with ab's counters and HdrHistogram
// latencies. The plan and the measurement are the vocabulary of package
// measure, which does not link fasthttp; this package is the engine alone.
// It knows nothing of Redis, HTTP APIs or jobs, so the CLI and the worker
// share it unchanged.
//
// Each worker owns its connection: it writes a request serialized once per
// URL by fasthttp and reads the answer through a net.Conn wrapper that
// timestamps the first byte, the header parsed by fasthttp's
// ResponseHeader.Read in the worker's 8 KiB read buffer (HeaderCap), the
// body skipped through that buffer by its framing (Content-Length, chunked,
// or to the server's close) and only counted, so a worker's memory is the
// same whatever the target sends; Plan.MaxBody bounds how long one body may
// be read. This gives ab's timings (connect, waiting, processing, total)
// without trace hooks, ab's keep-alive semantics, no per-host connection
// cap and no allocation per request on a kept-alive connection. Plan.HTTPVersion picks the request: HTTP/1.1 as
// fasthttp writes it (without keep-alive it says "Connection: close"), or
// HTTP/1.0 laid out byte for byte as ab writes it, so byte counts match
// ab's. Either way a request without keep-alive waits for the server's
// close, so the TIME_WAIT stays with the server. Each run resolves its
// hosts once, before its clock starts, through the plan's Guard (the
// address policy, which also admits every connect) or the system's
// resolver, so the CLI's runs and the service's dial alike. On Linux every
// connection is dialled below net.Dialer (sockDial: three system
// calls per connection where net.Dialer spends eight), and its connects,
// reads, writes and close are raw system calls on a non-blocking socket
// (sockConn), which keep the scheduler's monitor from handing the worker's P
// to another thread mid-request; the socket joins the runtime poller only
// when a call would block, which on a fast target without keep-alive none
// does.
//
// Workers batch their timings into one set of histograms per CPU, so memory
// does not grow with Requests or Concurrency (unless Plan.RecordSamples).
// The same batches carry each completion and failure to the shard's
// timeline recorder (timeline.go), which cuts the run into intervals.
// With Plan.OnInterval set, one goroutine (live.go) hands each interval out
// once it is closed: a worker's batch holds one interval and marks the
// oldest record it holds (once per batch, not per request), so an interval
// is closed a short settle delay after its end once no worker holds a
// record of it; the run's end hands out the rest from the final timeline.
// Failures of the target are data: counted by ab's classes plus Timeout,
// PortExhaustion, TLSHandshake, BodyTooLarge and HeaderTooLarge; Run
// returns an error only for an invalid plan. Progress is
// read from per-worker atomic counters; cancellation through the context
// stops the load within a second by expiring every connection's deadline.
// Plan.Timeout is enforced through connection deadlines renewed lazily, so
// each request gets between 99% and 100% of it.
//
// Every run also records the load generator's own CPU use, run-queue wait
// and cores (Measurement.ClientCPU, ClientCPUWait, ClientCores; Linux only),
// and ClientSaturated is the one rule for whether its req/s was the
// client's limit rather than the server's.
package loadgen
