package loadgen

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// pacingRates are the open model's rates whose send-time error
// BenchmarkPacing measures.
var pacingRates = []int{1_000, 10_000, 50_000}

// BenchmarkPacing measures the open model's send-time error (each
// request's actual start minus its intended start, Measurement.Open.SendLag)
// at 1k, 10k and 50k req/s against nginx in its own process on the second
// core, keep-alive, 32 workers, each rate with the run's nudge
// (pace_linux.go) and without it: the pair says what the nudge gives and
// costs (cpu-ns/req: the client's CPU per request). One op is one second
// of the schedule (rate requests); the ops' measurements merge, and
// lag-p50-µs, lag-p99-µs and lag-max-µs are the merged send lag's. Run it
// with the client pinned to the first core:
//
//	taskset -c 0 go test ./internal/loadgen/ -run '^$' -bench Pacing -benchtime 3x
//
// bench/pacing.sh measures the same from the target's side, beside vegeta.
func BenchmarkPacing(b *testing.B) {
	srv := pinnedNginx(b)
	for _, rate := range pacingRates {
		for _, nudge := range []bool{true, false} {
			b.Run(fmt.Sprintf("rate=%d/nudge=%s", rate, map[bool]string{true: "on", false: "off"}[nudge]), func(b *testing.B) {
				benchPacing(b, srv.URL+"/page.html", rate, runOptions{noNudge: !nudge})
			})
		}
	}
}

// benchPacing is one of BenchmarkPacing's rows.
func benchPacing(b *testing.B, url string, rate int, o runOptions) {
	p := measure.Plan{
		URLs: []string{url}, KeepAlive: true, Concurrency: 32,
		Rate: float64(rate), Requests: 200,
	}
	if _, err := runWith(context.Background(), p, o); err != nil { // warm nginx and the runtime
		b.Fatal(err)
	}
	p.Requests = rate
	var all measure.Measurement
	for b.Loop() {
		m, err := runWith(context.Background(), p, o)
		if err != nil || m.Complete != int64(p.Requests) || m.Failed != 0 {
			b.Fatalf("run = %d complete, %d failed, %v; want %d, 0", m.Complete, m.Failed, err, p.Requests)
		}
		all.Merge(m)
	}
	lag := &all.Open.SendLag
	b.ReportMetric(float64(lag.Quantile(0.5)), "lag-p50-µs")
	b.ReportMetric(float64(lag.Quantile(0.99)), "lag-p99-µs")
	b.ReportMetric(float64(lag.Max), "lag-max-µs")
	b.ReportMetric(float64(all.ClientCPU)/float64(all.Complete), "cpu-ns/req")
}

// pinnedNginx starts nginx serving a 7 638-byte page and moves it to the
// second core, so the client's core is the client's alone.
func pinnedNginx(b *testing.B) *testservers.Server {
	taskset := testservers.Require(b, "taskset", "util-linux")
	srv := testservers.Nginx(b, testservers.Files{"page.html": fixedBody(7638)})
	pid, err := os.ReadFile(filepath.Join(srv.Dir, "nginx.pid"))
	if err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command(taskset, "-a", "-cp", "1", strings.TrimSpace(string(pid))).CombinedOutput(); err != nil {
		// The machine has no second core (the client's own pinning
		// does not count: nginx is moved off it).
		b.Skipf("taskset nginx to core 1: %v %s", err, out)
	}
	return srv
}
