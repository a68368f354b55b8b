package loadgen

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/measure"
)

// A Watch that asks for the end stops the run early, and the measurement
// says so with the Watch's words; snapshots count the non-2xx answers.
func TestRunWatchStops(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		ctx.SetBodyString("x")
	}, nil)
	var last measure.Snapshot // Watch is called from one goroutine, ended before Run returns
	began := time.Now()
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Duration: 10 * time.Second, Concurrency: 2, KeepAlive: true,
		WatchInterval: 10 * time.Millisecond,
		Watch: func(s measure.Snapshot) string {
			last = s
			if s.Non2xx >= 50 {
				return "enough 503s"
			}
			return ""
		}})
	took := time.Since(began)
	t.Logf("stopped after %v, %d complete", took, m.Complete)
	if took > 2*time.Second {
		t.Errorf("Run took %v, want the Watch to end it long before its 10s", took)
	}
	checkEq(t, "Stopped", m.Stopped, "enough 503s")
	checkEq(t, "Canceled", m.Canceled, false)
	if last.Non2xx < 50 || last.Non2xx > last.Completed || m.Non2xx < last.Non2xx {
		t.Errorf("last snapshot %+v, measurement non-2xx %d: want non-2xx counted among the completed", last, m.Non2xx)
	}
}

// A Watch that never answers lets the run go to its end.
func TestRunWatchSilent(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("x") }, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 300, Concurrency: 2, KeepAlive: true,
		WatchInterval: time.Millisecond,
		Watch:         func(measure.Snapshot) string { return "" }})
	checkEq(t, "Complete", m.Complete, 300)
	checkEq(t, "Stopped", m.Stopped, "")
}
