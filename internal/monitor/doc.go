// Package monitor reads a target's own metrics while it is under load: a
// Prometheus text-format endpoint (node_exporter, process-exporter, an
// application's /metrics with process_cpu_seconds_total) scraped at a
// run's start, once per timeline interval and at its end. From the scrapes
// it builds a run's Server: the CPU seconds the server used, how many of
// its cores that kept busy, memory at the end and at the peak, and the
// recorded series per interval of the run's timeline.
//
// Spec is what a job's target says (`"monitor": {...}`) and Selector the
// small PromQL subset it names series with (a metric name and label
// matchers =, !=, =~, !~). The Scraper fetches and parses one exposition
// with the Prometheus project's own parser (expfmt), through the dialer
// the worker gives it (the address policy), bounded by a timeout and a
// body cap. A Recorder runs beside a run in a goroutine of its own; the
// load engine knows nothing of it. A failed scrape is counted in the
// Server, named in its message, and never fails the run.
package monitor
