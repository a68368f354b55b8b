package analysis

import (
	"math"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
)

// newStat summarises xs; the zero Stat when xs is empty. SD is the sample
// standard deviation (n-1), as ab's and a spreadsheet's STDEV.
func newStat(xs []float64) job.Stat {
	if len(xs) == 0 {
		return job.Stat{}
	}
	st := job.Stat{N: len(xs), Min: xs[0], Max: xs[0]}
	var sum float64
	for _, x := range xs {
		sum += x
		st.Min, st.Max = min(st.Min, x), max(st.Max, x)
	}
	st.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var sq float64
		for _, x := range xs {
			sq += (x - st.Mean) * (x - st.Mean)
		}
		st.SD = math.Sqrt(sq / float64(len(xs)-1))
	}
	if st.Mean != 0 {
		st.CV = st.SD / math.Abs(st.Mean)
	}
	return st
}

// metricStat summarises the metric called name over reports, counting
// only the runs where it is defined (see metric.Metric.Read).
func metricStat(reports []*abreport.Report, name string) job.Stat {
	return newStat(metricSamples(reports, name))
}

// metricSamples is the value of the metric called name in each of reports where it is
// defined, in the reports' order.
func metricSamples(reports []*abreport.Report, name string) []float64 {
	xs := make([]float64, 0, len(reports))
	for _, r := range reports {
		if v, ok := metric.Read(r, name); ok {
			xs = append(xs, v)
		}
	}
	return xs
}

// percentKeys are ab's percentages, the keys of PointSummary.PercentilesMs.
func percentKeys() []int { return []int{50, 66, 75, 80, 90, 95, 98, 99, 100} }
