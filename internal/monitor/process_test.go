package monitor_test

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/testservers"
)

// scraper is the worker's: through the loopback-only address policy.
func scraper() *monitor.Scraper {
	p := netguard.LoopbackOnly()
	d := &netguard.Dialer{Policy: p, Dialer: &net.Dialer{Control: p.Control}}
	return monitor.NewScraper(monitor.ScraperConfig{Dial: d.DialContext, Timeout: time.Second})
}

// load sends requests to url from c goroutines for d (at most 100 000),
// and returns how many completed and when the load began and ended.
func load(t *testing.T, url string, c int, d time.Duration) (n int64, from, to time.Time) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	var done atomic.Int64
	var wg sync.WaitGroup
	from = time.Now()
	end := from.Add(d)
	for range c {
		wg.Go(func() {
			for time.Now().Before(end) && done.Load() < 100_000 {
				resp, err := client.Get(url)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return done.Load(), from, time.Now()
}

// within says whether got is within frac of want.
func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }

func sum(vs []*float64) (total float64, nulls int) {
	for _, v := range vs {
		if v == nil {
			nulls++
			continue
		}
		total += *v
	}
	return total, nulls
}

// recordLoad scrapes metricsURL every interval while load runs against
// loadURL, reading cpu() (the truth, from /proc) just before the
// recorder starts and after it stops.
func recordLoad(t *testing.T, spec monitor.Spec, loadURL string, c int, interval time.Duration, cpu func() float64) (*monitor.Server, float64) {
	t.Helper()
	before := cpu()
	rec := monitor.Start(context.Background(), scraper(), spec, interval)
	n, from, to := load(t, loadURL, c, 2*time.Second)
	recording := rec.Stop(context.Background())
	used := cpu() - before
	nIntervals := int(math.Ceil(float64(to.Sub(from)) / float64(interval)))
	s := recording.Server(monitor.Run{From: from, To: to, Requests: n, Start: from, Interval: interval, N: nIntervals})
	t.Logf("requests %d, truth %.3f CPU s; server: cpu %v s, busy %v of %v cores (%s), %v ms/request, memory %v (peak %v), scrapes %d, errors %d %s",
		n, used, deref(s.CPUSeconds), deref(s.CoresBusy), s.Cores, s.CoresFrom, deref(s.CPUMsPerRequest), deref(s.MemoryBytes), deref(s.MemoryPeakBytes), s.Scrapes, s.ScrapeErrors, s.Message)
	if s.CPUSeconds == nil || s.Timeline == nil {
		t.Fatalf("no CPU recorded: %+v", s)
	}
	return s, used
}

func deref(p *float64) any {
	if p == nil {
		return "-"
	}
	return *p
}

// checkCPU holds the stored CPU, per run and summed over the intervals,
// to ±10 % of what /proc says was used.
func checkCPU(t *testing.T, s *monitor.Server, used float64) {
	t.Helper()
	if used < 0.2 {
		t.Fatalf("the target used only %.3f CPU s: the load did not reach it", used)
	}
	if !within(*s.CPUSeconds, used, 0.10) {
		t.Errorf("cpu_seconds = %.3f, want %.3f ± 10 %% (/proc)", *s.CPUSeconds, used)
	}
	total, nulls := sum(s.Timeline.CPUSeconds)
	if nulls > 0 || !within(total, used, 0.10) {
		t.Errorf("intervals' cpu_seconds sum to %.3f (%d null), want %.3f ± 10 %% (/proc): %v", total, nulls, used, s.Timeline.CPUSeconds)
	}
	if s.ScrapeErrors != 0 {
		t.Errorf("scrape_errors = %d: %s", s.ScrapeErrors, s.Message)
	}
}

// TestProcessCPUOfARealTarget: a Go server pinned to one core with
// taskset, exposing process_cpu_seconds_total through client_golang's
// process collector, burns CPU per request; the server CPU stored is
// within 10 % of what its /proc/PID/stat says it used.
func TestProcessCPUOfARealTarget(t *testing.T) {
	target := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "0"})
	s, used := recordLoad(t, monitor.Spec{Prometheus: target.MetricsURL()}, target.URL+"/work?rounds=20000", 2, 250*time.Millisecond,
		func() float64 { return testservers.ProcessCPU(t, target.Pid) })
	checkCPU(t, s, used)
	if s.CPUSelector != "process_cpu_seconds_total" || s.MemorySelector != "process_resident_memory_bytes" {
		t.Errorf("selectors = %q, %q; want the process collector's", s.CPUSelector, s.MemorySelector)
	}
	// taskset -c 0: Go sets GOMAXPROCS from the affinity mask.
	if s.Cores != 1 || s.CoresFrom != monitor.CoresFromGoMaxProcs {
		t.Errorf("cores = %v from %q, want 1 from %s", s.Cores, s.CoresFrom, monitor.CoresFromGoMaxProcs)
	}
	if s.CPUShare == nil || *s.CPUShare <= 0 || *s.CPUShare > 1.1 {
		t.Errorf("cpu_share = %v, want (0, 1] for a server pinned to one core", deref(s.CPUShare))
	}
	if s.MemoryBytes == nil || *s.MemoryBytes < 1<<20 || *s.MemoryPeakBytes < *s.MemoryBytes {
		t.Errorf("memory %v, peak %v: want a resident size of a Go server, peak ≥ end", deref(s.MemoryBytes), deref(s.MemoryPeakBytes))
	}
}

// TestProcessExporterCPU: the same target seen by Debian's
// prometheus-process-exporter, which reads /proc itself.
func TestProcessExporterCPU(t *testing.T) {
	target := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "0"})
	exp := testservers.StartExporter(t, "prometheus-process-exporter", "prometheus-process-exporter", "-web.listen-address",
		"-procnames", "cputarget")
	s, used := recordLoad(t, monitor.Spec{Prometheus: exp.URL, Cores: 1}, target.URL+"/work?rounds=20000", 2, 250*time.Millisecond,
		func() float64 { return testservers.ProcessCPU(t, target.Pid) })
	checkCPU(t, s, used)
	if s.CPUSelector != "namedprocess_namegroup_cpu_seconds_total" || s.CoresFrom != monitor.CoresFromSpec {
		t.Errorf("cpu selector %q, cores from %q; want process-exporter's and the spec's", s.CPUSelector, s.CoresFrom)
	}
}

// TestNodeExporterCPU: Debian's prometheus-node-exporter counts the whole
// machine: its busy CPU within 10 % of /proc/stat's over the same span,
// its cores the machine's.
func TestNodeExporterCPU(t *testing.T) {
	target := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{})
	exp := testservers.StartExporter(t, "prometheus-node-exporter", "prometheus-node-exporter", "--web.listen-address",
		"--collector.disable-defaults", "--collector.cpu", "--collector.meminfo")
	spec := monitor.Spec{Prometheus: exp.URL, Series: []string{`node_cpu_seconds_total{mode=~"user|system"}`, "node_memory_MemFree_bytes"}}
	s, used := recordLoad(t, spec, target.URL+"/work?rounds=20000", 2, 250*time.Millisecond,
		func() float64 { return testservers.SystemBusyCPU(t) })
	checkCPU(t, s, used)
	// The extra series, on the same grid: a counter's increase per
	// interval (user + system, most of the busy CPU), a gauge's value.
	if len(s.Timeline.Series) != 2 {
		t.Fatalf("series = %+v, want 2", s.Timeline.Series)
	}
	user, free := s.Timeline.Series[0], s.Timeline.Series[1]
	userSum, nulls := sum(user.Values)
	if !user.Counter || nulls > 0 || len(user.Values) != len(s.Timeline.CPUSeconds) || userSum > *s.CPUSeconds*1.01 || userSum < *s.CPUSeconds/2 {
		t.Errorf("user+system series %+v sums to %.3f: want a counter on the run's grid, between half the busy CPU (%.3f) and all of it", user, userSum, *s.CPUSeconds)
	}
	if _, nulls := sum(free.Values); free.Counter || nulls > 0 || len(free.Values) != len(s.Timeline.CPUSeconds) || *free.Values[0] <= 0 {
		t.Errorf("MemFree series %+v: want a gauge with a value in every interval", free)
	}
	if s.CPUSelector != `node_cpu_seconds_total{mode!="idle"}` || s.MemorySelector != "node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes" {
		t.Errorf("selectors = %q, %q; want node_exporter's defaults", s.CPUSelector, s.MemorySelector)
	}
	if s.CoresFrom != monitor.CoresFromNodeCPU || int(s.Cores) != runtime.NumCPU() {
		t.Errorf("cores = %v from %q, want %d from %s", s.Cores, s.CoresFrom, runtime.NumCPU(), monitor.CoresFromNodeCPU)
	}
}
