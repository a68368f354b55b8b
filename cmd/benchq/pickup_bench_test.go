package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
)

// BenchmarkPickupLatency measures queue pick-up: from the moment a client
// sends POST /v1/jobs to the first request of that job on the target, with
// the all-in-one service (API + one worker) on a real redis-server and the
// worker idle (each job finishes before the next is posted). It reports
// the p50 and p99 over the iterations; ns/op is the whole cycle (POST,
// pick-up, the one-request run, the polls that see it finish).
//
// Each iteration lasts about a pick-up, up to 1.5x the worker's poll
// interval while asynq polls empty queues, so give a count:
//
//	go test -run '^$' -bench PickupLatency -benchtime 40x ./cmd/benchq
func BenchmarkPickupLatency(b *testing.B) {
	rs := redistest.Start(b)
	base := startBenchMain(b, rs.URL())
	arrivals := make(chan arrival, 16)
	targetURL := startArrivalTarget(b, arrivals)
	client := &http.Client{Timeout: 10 * time.Second}

	var pickups []time.Duration
	for i := 0; b.Loop(); i++ {
		spec := fmt.Sprintf(`{"name":"pickup","targets":[{"url":"%s%d"}],"sweep":{"requests":[1]}}`, targetURL, i)
		sent := time.Now()
		id := postJob(b, client, base, spec)
		pickups = append(pickups, awaitArrival(b, arrivals, i).Sub(sent))
		awaitDone(b, client, base, id)
	}
	slices.Sort(pickups)
	b.ReportMetric(msAt(pickups, 0.50), "p50-pickup-ms")
	b.ReportMetric(msAt(pickups, 0.99), "p99-pickup-ms")
}

// arrival is the first request of iteration seq seen by the target.
type arrival struct {
	seq int
	at  time.Time
}

// startArrivalTarget serves /pickup/{seq} on loopback and reports when
// each request arrived, before doing anything else.
func startArrivalTarget(b *testing.B, arrivals chan<- arrival) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		at := time.Now()
		if seq, err := strconv.Atoi(strings.TrimPrefix(string(ctx.Path()), "/pickup/")); err == nil {
			select {
			case arrivals <- arrival{seq: seq, at: at}:
			default:
			}
		}
		ctx.SetBodyString("ok")
	}}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String() + "/pickup/"
}

// startBenchMain runs the all-in-one service in-process on redisURL.
func startBenchMain(b *testing.B, redisURL string) string {
	b.Helper()
	cfg := config.Defaults()
	cfg.Addr = "127.0.0.1:0"
	cfg.RedisURL = redisURL
	cfg.ShutdownTimeout = 10 * time.Second
	m := NewMain(cfg, slog.New(slog.DiscardHandler))
	if err := m.Run(b.Context()); err != nil {
		b.Fatalf("Main.Run: %v", err)
	}
	b.Cleanup(func() {
		if err := m.Close(); err != nil {
			b.Errorf("Main.Close: %v", err)
		}
	})
	return m.URL()
}

func postJob(b *testing.B, client *http.Client, base, spec string) string {
	b.Helper()
	resp, err := client.Post(base+"/v1/jobs", "application/json", bytes.NewReader([]byte(spec)))
	if err != nil {
		b.Fatalf("POST /v1/jobs: %v", err)
	}
	defer resp.Body.Close()
	var j apiJob
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &j) != nil || j.ID == "" {
		b.Fatalf("POST /v1/jobs = %d %s, want 202 with a job", resp.StatusCode, body)
	}
	return j.ID
}

// awaitArrival waits for iteration seq's request, skipping stale ones.
func awaitArrival(b *testing.B, arrivals <-chan arrival, seq int) time.Time {
	b.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case a := <-arrivals:
			if a.seq == seq {
				return a.at
			}
		case <-timeout:
			b.Fatalf("job %d not picked up within 10s", seq)
		}
	}
}

// awaitDone polls the job until it is terminal, so the next iteration
// finds the worker idle.
func awaitDone(b *testing.B, client *http.Client, base, id string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/jobs/"+id, nil)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatalf("GET job %s: %v", id, err)
		}
		var j apiJob
		err = json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		switch {
		case err != nil:
			b.Fatalf("GET job %s: %v", id, err)
		case j.Status == "succeeded":
			return
		case j.Status == "failed" || j.Status == "canceled":
			b.Fatalf("job %s ended %s (%s)", id, j.Status, j.Error)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// msAt is the q-quantile of sorted durations, in milliseconds.
func msAt(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(q*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Millisecond)
}
