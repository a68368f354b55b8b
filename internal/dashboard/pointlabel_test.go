package dashboard

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// TestPointLabel: the live view names a point by its stop, a ramp by its
// range.
func TestPointLabel(t *testing.T) {
	for _, tc := range []struct {
		p    job.Point
		want string
	}{
		{job.Point{Target: "nginx", Concurrency: 8, Requests: 2000}, "nginx · c=8 · n=2000"},
		{job.Point{Target: "nginx", Concurrency: 8, Duration: job.Duration(10 * time.Second)}, "nginx · c=8 · t=10s"},
		{job.Point{Target: "nginx", Concurrency: 100, Rate: 500, Duration: job.Duration(time.Minute)}, "nginx · c=100 · rate=500/s"},
		{job.Point{Target: "nginx", Concurrency: 100, Rate: 100, RateTo: 5000, Duration: job.Duration(time.Minute)}, "nginx · c=100 · rate=100→5000/s"},
	} {
		if got := pointLabel(tc.p); got != tc.want {
			t.Errorf("pointLabel(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
