// Package abreport is benchq's result model and its renderers. FromMeasurement
// turns one run of the load engine (a measure.Measurement, raw counters and
// histograms in µs) into a Report: one field per line of ApacheBench's
// report, same meaning, units in the JSON names, plus the status-code counts
// and the encoded total-time HdrHistogram, so total times of several runs
// merge exactly (merging every phase needs the measurement itself, see
// measure.EncodeMeasurement).
// The Report is what the worker stores and the API serves; the renderers
// print it as ab 2.3's text report (WriteAB, with WriteABBanner and
// Heartbeat for the lines around it), ab -e's CSV (WriteCSV), ab -g's
// gnuplot file (WriteGnuplot, from the per-request samples), http_load's
// summary (WriteHTTPLoad) and JSON (WriteJSON). A script that parses ab's
// output must parse ours: labels, order, spacing, number formats and the
// conditional lines follow ab 2.3's own output. The one
// addition is a WARNING line after the last of them when the load generator
// was short of CPU (Report.ClientSaturated): the req/s then measures the
// client, not the server.
//
// Deliberate deviations from ab, all where ab keeps every sample in memory
// or is buggy:
//
//   - Medians are textbook medians (the middle value, or the mean of the two
//     middle values truncated to whole µs), read from each phase's
//     histogram. ab swaps its odd and even branches and, for an odd count,
//     averages the middle value with the next larger one.
//   - Percentiles use ab's rank rule (the sample at index floor(n·p/100)
//     of the sorted total times, the longest request for 100 %) but read
//     that sample from the HdrHistogram instead of a sorted array of every
//     request: exact below 2.048 ms and to three significant digits above
//     (a bucket's highest equivalent value, clamped to the exact minimum
//     and maximum), then rounded half up to whole ms as ab does. Memory so
//     stays flat however many requests run.
//   - ab -e reads past the end of its array for small runs (row 99 when
//     n ≤ 50 prints garbage); WriteCSV clamps the index to the slowest
//     request.
//   - Mean and sd come from exact running sums; sd is the sample deviation
//     around the exact mean, where ab uses the mean truncated to whole µs
//     (the two differ by well under a µs). The text report truncates the
//     stored mean to whole µs before rounding, as ab.
//   - The breakdown line "(Connect: …, Receive: …, Length: …, Exceptions: …)"
//     keeps ab's four classes; benchq's own classes are folded in so they
//     add up as in ab: port exhaustion and failed TLS handshakes into
//     Connect (ab's connection is never made either), timeouts into Receive
//     (ab aborts the whole run on its -s timeout), bodies above the body
//     size cap and headers above 8 KiB into Exceptions (ab has no body cap,
//     and stalls on a header above its 8 KB buffer until its -s timeout
//     aborts the run). The JSON keeps all nine separate and adds a hint for
//     each.
//   - An open-model run (a fixed start rate, which ab lacks) keeps every
//     line of ab's report, so ab's parsers still parse it, and ends with a
//     block of its own: requested and achieved rate, late starts, which
//     latencies are corrected for coordinated omission, and the uncorrected
//     percentiles. The first "Time per request" line then carries the mean
//     latency instead of ab's c·t/n, which only in ab's closed model is one.
package abreport
