package abreport

import (
	"errors"
	"fmt"
	"sort"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchq/benchq/internal/measure"
)

// ErrNoHistogram is returned for a Report whose latency_histogram is empty
// (a run without completed requests, or a Report built by hand).
var ErrNoHistogram = errors.New("abreport: report has no latency histogram")

// DecodeHistogram reads back r.LatencyHistogram: the total-time histogram of
// the run in microseconds, ready to Merge with other runs' histograms.
func DecodeHistogram(r *Report) (*hdrhistogram.Histogram, error) {
	if r == nil || r.LatencyHistogram == "" {
		return nil, ErrNoHistogram
	}
	h, err := hdrhistogram.Decode([]byte(r.LatencyHistogram))
	if err != nil {
		return nil, fmt.Errorf("abreport: decode latency histogram: %w", err)
	}
	return h, nil
}

// encodeHistogram gives the V2 compressed base64 form; "" for no histogram.
func encodeHistogram(h *hdrhistogram.Histogram) string {
	b, err := measure.EncodeHistogram(h)
	if err != nil {
		// Only a failed write into memory could fail it.
		return ""
	}
	return string(b)
}

// ranked answers "the k-th smallest value" on a histogram: the value a
// sorted array of every sample, as ab keeps, would hold at index k-1. A
// bucket's highest equivalent value stands for its samples (HdrHistogram's
// convention, within 0.1 %; exact below 2048 µs), clamped to the exact
// extremes of the run.
type ranked struct {
	bars     []hdrhistogram.Bar
	cum      []int64 // cum[i] = samples in bars[0..i]
	min, max int64   // exact extremes, µs
}

func newRanked(h *hdrhistogram.Histogram, lo, hi int64) ranked {
	r := ranked{min: lo, max: hi}
	if h == nil {
		return r
	}
	r.bars = h.Distribution()
	r.cum = make([]int64, len(r.bars))
	var n int64
	for i, b := range r.bars {
		n += b.Count
		r.cum[i] = n
	}
	return r
}

func (r ranked) count() int64 {
	if len(r.cum) == 0 {
		return 0
	}
	return r.cum[len(r.cum)-1]
}

// at returns the k-th smallest value (1-based, clamped to 1..count); 0 for
// an empty histogram.
func (r ranked) at(k int64) int64 {
	n := r.count()
	if n == 0 {
		return 0
	}
	k = max(1, min(n, k))
	switch k { // the extremes are known exactly, not just to the bucket
	case 1:
		return r.min
	case n:
		return r.max
	}
	i := sort.Search(len(r.cum), func(i int) bool { return r.cum[i] >= k })
	return max(r.min, min(r.max, r.bars[i].To))
}

// median is the textbook median: the middle value for an odd count, the
// mean of the two middle values (truncated to whole µs, as ab's integer
// arithmetic) for an even one. ab swaps the two branches; see doc.go.
func (r ranked) median() int64 {
	n := r.count()
	if n%2 == 1 {
		return r.at(n/2 + 1)
	}
	return (r.at(n/2) + r.at(n/2+1)) / 2
}

// abPercentile is ab's stdout rule: the sample at 0-based index
// floor(n·p/100) of the sorted array, and the longest request for 100.
func (r ranked) abPercentile(p int) int64 {
	n := r.count()
	if p >= 100 {
		return r.at(n)
	}
	return r.at(n*int64(p)/100 + 1)
}

// abCSVPercentile is ab's -e rule: index trunc(0.5 + n·i/100), fastest for
// 0 and slowest for 100. ab reads past the end of its array when the index
// reaches n (i = 99 for n ≤ 50); we clamp to the slowest sample.
func (r ranked) abCSVPercentile(i int) int64 {
	n := r.count()
	switch {
	case i <= 0:
		return r.at(1)
	case i >= 100:
		return r.at(n)
	}
	idx := int64(0.5 + float64(n)*float64(i)/100)
	return r.at(idx + 1)
}
