package changepoint_test

import (
	"fmt"
	"testing"

	"github.com/benchq/benchq/internal/changepoint"
)

// BenchmarkDetect is the cost of one series' change points, computed when
// a job ends for each of its series: 60 values (a template's recent
// history) and 500 (a long one), each with a few steps in 3 % noise.
func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{60, 500} {
		series := generate(seeded(uint64(n)), n, 0.03,
			level{0, 100}, level{n / 4, 110}, level{n / 2, 95}, level{3 * n / 4, 120})
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if len(changepoint.Detect(series, changepoint.DefaultOptions())) == 0 {
					b.Fatal("no change point found")
				}
			}
		})
	}
}
