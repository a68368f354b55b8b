package report

import (
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// The .hgrm text's parameters, those HdrHistogram's own tools use: five
// percentile ticks per half distance to 100 %, values in milliseconds
// (the histogram records µs), which is the unit HdrHistogram's plotter
// assumes.
const (
	hgrmTicksPerHalfDistance = 5
	hgrmValueScale           = 1000.0
)

// writeHGRM writes each run's latency distribution, its stored total-time
// HdrHistogram (abreport.Report.LatencyHistogram: 1 µs to 1 h at three
// significant digits, what its percentiles come from), in the text
// HdrHistogram's outputPercentileDistribution prints: the percentile
// table, then the Mean/StdDeviation, Max/Total count and
// Buckets/SubBuckets footer. Each run is preceded by a "#" line naming it,
// which HdrHistogram's plotter and hdr-plot skip. The plotter draws a
// file as one series, so a file for it holds one run (the API's
// &run=POINT:REPEAT); runs are separated by a blank line.
func writeHGRM(w io.Writer, j *job.Job, runs []job.Run) error {
	for i, v := range runViews(j, runs) {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "#[run %d:%d: %s]\n", v.Point.Index, v.Repeat, v.describe()); err != nil {
			return err
		}
		h, err := abreport.DecodeHistogram(v.Result)
		if errors.Is(err, abreport.ErrNoHistogram) {
			h = measure.NewPhase().Hist // nothing completed: an empty distribution
		} else if err != nil {
			return fmt.Errorf("point %d repeat %d: %w", v.Point.Index, v.Repeat, err)
		}
		if err := writePercentileDistribution(w, h); err != nil {
			return err
		}
	}
	return nil
}

// describe names a run as header does, without the arrows.
func (v runView) describe() string {
	partial := ""
	switch {
	case v.Partial:
		partial = ", partial"
	case v.Aborted:
		partial = fmt.Sprintf(", aborted by threshold %q", v.AbortedBy)
	}
	return fmt.Sprintf("target %s, c=%d, %s, repeat %d/%d%s", v.Point.Target, v.Point.Concurrency, stopFlag(v.Point), v.Repeat+1, v.Repeats, partial)
}

// writePercentileDistribution prints h as HdrHistogram's Java
// outputPercentileDistribution(out, 5, 1000.0) does, column widths and
// decimals included (hdrhistogram-go's PercentilesPrint uses other
// widths, a tab-separated header and an "inf" column on the last line):
// each percentile tick's value (the highest value equivalent to its
// bucket), the tick, the count up to it and 1/(1-tick), the 100 % line
// without the last column.
func writePercentileDistribution(w io.Writer, h *hdrhistogram.Histogram) error {
	digits := h.SignificantFigures()
	if _, err := fmt.Fprintf(w, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)"); err != nil {
		return err
	}
	if h.TotalCount() > 0 { // the iterator gives an empty histogram a 100 % line; Java prints none
		for _, b := range h.CumulativeDistributionWithTicks(hgrmTicksPerHalfDistance) {
			var err error
			value, q := float64(b.ValueAt)/hgrmValueScale, b.Quantile/100
			if b.Quantile == 100 {
				_, err = fmt.Fprintf(w, "%12.*f %2.12f %10d\n", digits, value, q, b.Count)
			} else {
				_, err = fmt.Fprintf(w, "%12.*f %2.12f %10d %14.2f\n", digits, value, q, b.Count, 1/(1-q))
			}
			if err != nil {
				return err
			}
		}
	}
	buckets, subBuckets := hdrGeometry(h)
	_, err := fmt.Fprintf(w, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n#[Max     = %12.*f, Total count    = %12d]\n#[Buckets = %12d, SubBuckets     = %12d]\n",
		digits, h.Mean()/hgrmValueScale, digits, h.StdDev()/hgrmValueScale,
		digits, float64(h.Max())/hgrmValueScale, h.TotalCount(), buckets, subBuckets)
	return err
}

// hdrGeometry computes the bucket and sub-bucket counts of h's range and
// precision as HdrHistogram does (the Go library keeps them unexported):
// sub-buckets enough for single-unit resolution up to 2×10^digits, and
// buckets, each doubling the range, until the highest trackable value is
// covered.
func hdrGeometry(h *hdrhistogram.Histogram) (buckets, subBuckets int64) {
	single := int64(2)
	for range h.SignificantFigures() {
		single *= 10
	}
	subBuckets = int64(1) << bits.Len64(uint64(single-1)) // 2^ceil(log2(single))
	unit := bits.Len64(uint64(h.LowestTrackableValue())) - 1
	smallestUntrackable := subBuckets << unit
	buckets = 1
	for smallestUntrackable <= h.HighestTrackableValue() {
		if smallestUntrackable > (1<<63-1)/2 {
			return buckets + 1, subBuckets
		}
		smallestUntrackable <<= 1
		buckets++
	}
	return buckets, subBuckets
}
