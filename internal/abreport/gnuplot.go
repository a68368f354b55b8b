package abreport

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// ctimeLayout is APR's apr_ctime: ctime(3) with a zero-padded day.
const ctimeLayout = "Mon Jan 02 15:04:05 2006"

// WriteGnuplot writes ab -g's tab-separated file: one row per completed
// request with its start (in ctime format and as Unix seconds) and its
// connect, processing, total and waiting times in whole ms, rounded half up.
// Rows are sorted by total time, as ab leaves them, not by start; ties keep
// start order. The start is printed in its own location: the engine records
// local time, as ab prints. samples is not modified. Like ab, it writes
// nothing when no request completed.
func WriteGnuplot(w io.Writer, samples []measure.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	sorted := slices.Clone(samples)
	slices.SortStableFunc(sorted, func(a, b measure.Sample) int {
		return cmp.Or(cmp.Compare(a.Total, b.Total), a.Start.Compare(b.Start))
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "starttime\tseconds\tctime\tdtime\tttime\twait\n")
	for _, s := range sorted {
		fmt.Fprintf(bw, "%s\t%d\t%d\t%d\t%d\t%d\n", s.Start.Format(ctimeLayout), s.Start.Unix(),
			durMs(s.Connect), durMs(s.Processing), durMs(s.Total), durMs(s.Waiting))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("abreport: write gnuplot: %w", err)
	}
	return nil
}

// durMs is ab's whole-ms rounding of a duration measured in whole µs.
func durMs(d time.Duration) int64 { return roundMs(d.Microseconds()) }
