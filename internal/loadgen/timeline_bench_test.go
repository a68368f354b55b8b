package loadgen

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// BenchmarkTimeline is the pair that prices the timeline: the same run
// against the same nginx with the timeline recorded and without, and a
// third row with the intervals handed out as they close (Plan.OnInterval,
// as the service's worker runs), whose goroutine's CPU counts too. nginx
// runs in its own process on the second core, so the run's ClientCPU is
// the client's alone; cpu-ns/req is that CPU per completed request, less
// the time spent spinning on reads. Run it pinned, the client on the first
// core, and compare the two rows:
//
//	taskset -c 0 go test ./internal/loadgen/ -run '^$' -bench Timeline -count 6 | tee t.txt
//	benchstat -col /timeline t.txt
func BenchmarkTimeline(b *testing.B) {
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
	for _, variant := range []string{"on", "off", "live"} {
		on := variant != "off"
		p := measure.Plan{URLs: []string{srv.URL + "/page.html"}, KeepAlive: true, Concurrency: 8}
		closed := 0
		if variant == "live" {
			p.OnInterval = func(measure.ClosedInterval) { closed++ }
		}
		b.Run("timeline="+variant, func(b *testing.B) {
			p.Requests = 200 // warm nginx and the runtime
			if _, err := runWith(context.Background(), p, on); err != nil {
				b.Fatal(err)
			}
			p.Requests = max(b.N, p.Concurrency)
			b.ReportAllocs()
			b.ResetTimer()
			m, err := runWith(context.Background(), p, on)
			b.StopTimer()
			if err != nil || m.Complete != int64(p.Requests) || m.Failed != 0 || (m.Timeline != nil) != on {
				b.Fatalf("run = %d complete, %d failed, timeline %v, %v; want %d, 0, %v", m.Complete, m.Failed, m.Timeline != nil, err, p.Requests, on)
			}
			if p.OnInterval != nil && closed == 0 {
				b.Fatal("no interval handed out")
			}
			b.ReportMetric(float64(m.ClientCPU-m.ClientSpin)/float64(m.Complete), "cpu-ns/req")
		})
	}
}

// BenchmarkTimelineRecord prices what the timeline adds to each completed
// request apart from the network's noise: a worker's record, stamped or
// not, and its share of the batch's trip into the shard, whose histograms
// it feeds (ns/op is per request). One request every 20 µs of the run, so
// the intervals turn over as in a real run.
func BenchmarkTimelineRecord(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(map[bool]string{true: "timeline=on", false: "timeline=off"}[on], func(b *testing.B) {
			origin := time.Now()
			e := &engine{recordTimeline: on, origin: origin, timelineInterval: time.Second}
			w := &worker{e: e, shard: newShard(false), batch: make([]record, 0, batchSize)}
			if on {
				w.shard.timeline = newTimelineRecorder(origin, time.Second)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				done := origin.Add(time.Duration(i%3_000_000) * 20 * time.Microsecond)
				start := done.Add(-time.Duration(100+i%900) * time.Microsecond)
				w.tc.total += 7800
				r := record{
					connect: 0, waiting: micros(done.Sub(start)) - 5, total: micros(done.Sub(start)),
					uncorrected: micros(done.Sub(start)), handshake: -1, status: 200,
				}
				if e.recordTimeline {
					w.stamp(&r, done, start, start)
				}
				w.batch = append(w.batch, r)
				if len(w.batch) == batchSize {
					w.flush()
				}
			}
		})
	}
}

// BenchmarkTimelineStoredSize measures what a real run's timeline costs to
// store: one 30 s run at 1 s intervals against nginx (keep-alive,
// concurrency 4, as fast as the machine goes), its timeline encoded whole
// (measure.EncodeTimeline, before any bound) at each latency level the
// bound may store it at, reported as stored bytes (base64) per interval and
// projected to a 10-minute run at 1 s. b.N is not used: the run is the
// measurement.
func BenchmarkTimelineStoredSize(b *testing.B) {
	srv := testservers.Nginx(b, testservers.Files{"page.html": fixedBody(7638)})
	m, err := Run(context.Background(), measure.Plan{
		URLs: []string{srv.URL + "/page.html"}, Concurrency: 4, KeepAlive: true, Duration: 30 * time.Second,
	})
	if err != nil || m.Timeline == nil {
		b.Fatalf("run: %v, timeline %v", err, m.Timeline)
	}
	b.ReportMetric(float64(m.Complete)/m.Elapsed.Seconds(), "req/s")
	// At each latency level EncodeTimelineWithin may store it at.
	tl := m.Timeline.Clone()
	for level := 0; level <= measure.MaxLatencyLevel; level++ {
		if level > 0 {
			tl.CoarsenLatency()
		}
		enc, err := measure.EncodeTimeline(tl)
		if err != nil {
			b.Fatal(err)
		}
		perInterval := float64(base64.StdEncoding.EncodedLen(len(enc))) / float64(len(tl.Intervals))
		b.ReportMetric(perInterval, fmt.Sprintf("B/interval@L%d", level))
		b.ReportMetric(perInterval*600/1024, fmt.Sprintf("KiB/10min@L%d", level))
	}
}
