package abreport

import (
	"bufio"
	"fmt"
	"io"
)

// WriteCSV writes ab -e's percentile file: "Percentage served,Time in ms"
// and rows 0..100 of the total time in ms with three decimals, read from the
// report's latency histogram with ab's rounded index (row 0 the fastest
// request, row 100 the slowest). Where ab reads past the end of its array
// (row 99 when n ≤ 50) we clamp to the slowest request. Like ab, it writes
// nothing for a run without completed requests.
func WriteCSV(w io.Writer, r *Report) error {
	if r.CompleteRequests == 0 {
		return nil
	}
	h, err := DecodeHistogram(r)
	if err != nil {
		return err
	}
	t := r.ConnectionTimesMs.Total
	rk := newRanked(h, msToUs(t.Min), msToUs(t.Max))
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Percentage served,Time in ms\n")
	for i := 0; i <= 100; i++ {
		fmt.Fprintf(bw, "%d,%.3f\n", i, usToMs(rk.abCSVPercentile(i)))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("abreport: write csv: %w", err)
	}
	return nil
}
