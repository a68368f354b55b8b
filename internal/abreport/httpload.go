package abreport

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
)

// WriteHTTPLoad writes http_load's summary
// with its printf formats: C's %g is Go's %.6g (six significant digits,
// exponent form from 1e6). Mapping: fetches are the requests that ended
// (completed, or failed before completing; a Length failure is a completed
// fetch with a "bad byte count", checked against the first response of the
// same URL); max parallel is the most requests seen in flight; bytes are
// body bytes; msecs/connect runs from the start of each new connection's
// dial until its request is written, msecs/first-response is the Waiting
// row (request written to first byte), both as http_load measures them.
// A report stored before the first two were measured falls back to the
// concurrency level and the Connect row.
// A load generator short of CPU adds ClientWarning's line at the end.
func WriteHTTPLoad(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	fetches := r.CompleteRequests + r.FailedRequests - r.Failed.Length
	bytes := float64(r.HTMLTransferredBytes)
	t := r.TimeTakenS
	parallel := r.MaxParallel
	if parallel == 0 && fetches > 0 {
		parallel = int64(r.ConcurrencyLevel) // stored before it was measured
	}
	fmt.Fprintf(bw, "%d fetches, %d max parallel, %s bytes, in %s seconds\n",
		fetches, parallel, gfmt(bytes), gfmt(t))
	if fetches > 0 {
		fmt.Fprintf(bw, "%s mean bytes/connection\n", gfmt(bytes/float64(fetches)))
	}
	if t > 0.01 {
		fmt.Fprintf(bw, "%s fetches/sec, %s bytes/sec\n", gfmt(float64(fetches)/t), gfmt(bytes/t))
	}
	if c := r.ConnectToWriteMs; c != nil {
		writeMsecs(bw, "connect", c.Mean, c.Max, c.Min)
	} else if c := r.ConnectionTimesMs.Connect; r.CompleteRequests > 0 {
		writeMsecs(bw, "connect", c.Mean, c.Max, c.Min)
	}
	if f := r.ConnectionTimesMs.Waiting; r.CompleteRequests > 0 {
		writeMsecs(bw, "first-response", f.Mean, f.Max, f.Min)
	}
	if r.Failed.Timeout != 0 {
		fmt.Fprintf(bw, "%d timeouts\n", r.Failed.Timeout)
	}
	if r.Failed.Length != 0 {
		fmt.Fprintf(bw, "%d bad byte counts\n", r.Failed.Length)
	}
	fmt.Fprintf(bw, "HTTP response codes:\n")
	for _, code := range slices.Sorted(maps.Keys(r.StatusCodes)) {
		if n := r.StatusCodes[code]; n > 0 && code >= 0 && code < 1000 {
			fmt.Fprintf(bw, "  code %03d -- %d\n", code, n)
		}
	}
	writeClientWarning(bw, r)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("abreport: write http_load summary: %w", err)
	}
	return nil
}

func writeMsecs(w io.Writer, what string, mean, maxMs, minMs float64) {
	fmt.Fprintf(w, "msecs/%s: %s mean, %s max, %s min\n", what, gfmt(mean), gfmt(maxMs), gfmt(minMs))
}

// gfmt is C's printf %g: six significant digits, trailing zeros dropped,
// exponent form below 1e-4 and from 1e6, a two-digit exponent at least.
func gfmt(v float64) string { return fmt.Sprintf("%.6g", v) }
