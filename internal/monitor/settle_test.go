package monitor_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/testservers"
)

// leaveQueue sends n CPU-heavy requests (about a fifth of a second of
// CPU each) to target and stops waiting for them after a moment, as a run
// that ends with requests in flight does: the server goes on serving them
// on its one core for about n/4 seconds.
func leaveQueue(t *testing.T, target *testservers.CPUTarget, n int) {
	t.Helper()
	client := &http.Client{Timeout: 100 * time.Millisecond}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := client.Get(target.URL + "/work?rounds=3000000")
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// TestSettleWaitsForAQuietServer: a real server process on one core with
// a queue of abandoned requests left to serve. Settle waits until it has
// served them (its process_cpu_seconds_total stops rising) and says so;
// on a server already quiet it returns after one look; with a limit
// shorter than the queue it gives up, saying how busy the server still
// was; an endpoint with no CPU series ends the wait at once, saying why.
func TestSettleWaitsForAQuietServer(t *testing.T) {
	target := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "0"})
	spec := monitor.Spec{Prometheus: target.MetricsURL()}
	ctx := context.Background()

	leaveQueue(t, target, 8)
	before := testservers.ProcessCPU(t, target.Pid)
	got := monitor.Settle(ctx, scraper(), spec, 0, 30*time.Second)
	used := testservers.ProcessCPU(t, target.Pid) - before
	t.Logf("after the queue: %+v; the server used %.2f CPU s meanwhile", got, used)
	if !got.Quiet || got.Message != "" || got.CoresBusy >= monitor.DefaultSettleBelow {
		t.Errorf("Settle = %+v, want a quiet server", got)
	}
	// The queue is about 2 s of CPU; the wait covers most of it.
	if got.WaitedS < 0.5*used || got.WaitedS < 0.5 {
		t.Errorf("waited %.2f s while the server used %.2f CPU s on its one core: it did not wait for the queue", got.WaitedS, used)
	}

	again := monitor.Settle(ctx, scraper(), spec, 0, 30*time.Second)
	if !again.Quiet || again.WaitedS > 5 {
		t.Errorf("Settle on a quiet server = %+v, want quiet after one look", again)
	}

	leaveQueue(t, target, 16)
	short := monitor.Settle(ctx, scraper(), spec, 0, 300*time.Millisecond)
	t.Logf("short limit: %+v", short)
	if short.Quiet || !strings.Contains(short.Message, "the server still kept") || !strings.Contains(short.Message, "the run began anyway") {
		t.Errorf("Settle with a limit shorter than the queue = %+v, want not quiet and a message saying how busy", short)
	}

	plain := testservers.StartHostile(t, testservers.Answer("no cpu", answer("200 OK", "up 1\n")))
	none := monitor.Settle(ctx, scraper(), monitor.Spec{Prometheus: plain.URL}, 0, 30*time.Second)
	if none.Quiet || none.WaitedS > 1 || !strings.Contains(none.Message, "gives no CPU series") {
		t.Errorf("Settle on an endpoint without CPU = %+v, want an immediate message", none)
	}
}
