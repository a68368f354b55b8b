package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/abcli"
	benchqclient "github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// BenchmarkRunPath measures one run of n requests through each path a
// user has: `benchq ab` (the CLI's parse and run) and a job on the
// all-in-one service, with its embedded Redis and on a real redis-server
// (API, queue, worker, progress and cancel polls, result stored). One
// iteration is one request: each sub-benchmark runs a single run of b.N
// requests, so per-request metrics are directly comparable across paths:
//
//   - allocs/req: heap allocations in the process per request, the
//     service's submission, its event stream to the waiting client and
//     the worker's progress and cancel polls included;
//   - cpu-ns/req: the process's CPU (getrusage) per request, the
//     in-process target's included, so compare paths, not absolutes.
//
// Run it with a request count, e.g.
//
//	go test -run '^$' -bench RunPath -benchtime 20000x ./cmd/benchq
func BenchmarkRunPath(b *testing.B) {
	target := startBenchTarget(b)
	rs := redistest.Start(b)
	embedded := startBenchMain(b, "")
	onRedis := startBenchMain(b, rs.URL())
	for _, keepAlive := range []bool{true, false} {
		mode := map[bool]string{true: "keepalive", false: "close"}[keepAlive]
		b.Run("cli/"+mode, func(b *testing.B) { benchCLIRun(b, target, keepAlive) })
		b.Run("service-embedded/"+mode, func(b *testing.B) { benchServiceRun(b, embedded, target, keepAlive) })
		b.Run("service-redis/"+mode, func(b *testing.B) { benchServiceRun(b, onRedis, target, keepAlive) })
	}
}

const runPathConcurrency = 4

func benchCLIRun(b *testing.B, target string, keepAlive bool) {
	n := max(b.N, runPathConcurrency)
	args := []string{"-q", "-n", fmt.Sprint(n), "-c", fmt.Sprint(runPathConcurrency)}
	if keepAlive {
		args = append(args, "-k")
	}
	args = append(args, target)
	measureRun(b, n, func() {
		if code := abcli.Run(b.Context(), args, processEnv(nil, io.Discard, io.Discard)); code != 0 {
			b.Fatalf("benchq ab exited %d", code)
		}
	})
}

func benchServiceRun(b *testing.B, base, target string, keepAlive bool) {
	n := max(b.N, runPathConcurrency)
	spec := fmt.Sprintf(`{"targets":[{"url":%q}],"request":{"keepalive":%t},"sweep":{"concurrency":[%d],"requests":[%d]}}`,
		target, keepAlive, runPathConcurrency, n)
	client := &http.Client{Timeout: 10 * time.Second}
	follower, err := benchqclient.New(base, "")
	if err != nil {
		b.Fatal(err)
	}
	var id string
	measureRun(b, n, func() {
		id = postJob(b, client, base, spec)
		// Wait as `benchq submit --wait` does, on the job's event stream:
		// a tight poll loop would add the benchmark's own allocations to
		// the service's.
		ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
		defer cancel()
		j, err := follower.Follow(ctx, id, nil)
		if err != nil || j.Status != job.StatusSucceeded {
			b.Fatalf("job %s: %v, status %q", id, err, j.Status)
		}
	})
	resp, err := client.Get(base + "/v1/jobs/" + id + "/results")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Runs []struct {
			Result struct {
				Complete int     `json:"complete_requests"`
				RPS      float64 `json:"requests_per_second"`
			} `json:"result"`
		} `json:"runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || len(res.Runs) != 1 || res.Runs[0].Result.Complete != n {
		b.Fatalf("results of %s: %v %+v, want one run of %d requests", id, err, res, n)
	}
	b.ReportMetric(res.Runs[0].Result.RPS, "req/s")
}

// measureRun times do, a run of n requests, and reports its allocations
// and CPU per request.
func measureRun(b *testing.B, n int, do func()) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu := processCPU()
	b.ResetTimer()
	do()
	b.StopTimer()
	cpu = processCPU() - cpu
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/req")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/req")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startBenchTarget serves a fixed 1 KiB body on loopback.
func startBenchTarget(b *testing.B) string {
	b.Helper()
	body := make([]byte, 1024)
	return testservers.StartFasthttp(b, func(ctx *fasthttp.RequestCtx) { ctx.SetBody(body) }) + "/"
}
