// Package loadgen is benchq's load engine: given a Plan it drives HTTP load
// with fasthttp in ab's closed model (c workers, n requests or a time limit)
// or in an open model (a fixed rate of request starts), and returns one
// Measurement with ab's counters and HdrHistogram latencies. It knows nothing
// of Redis, HTTP APIs or jobs, so the CLI and the worker share it unchanged.
package loadgen
