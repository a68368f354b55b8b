package monitor

import (
	"context"
	"fmt"
	"time"
)

// DefaultSettleBelow is the share of its cores a server may keep busy and
// still count as quiet: an idle server's housekeeping, an exporter's own
// scrape, stay under it.
const DefaultSettleBelow = 0.1

// settleStep is how long each look at the server's CPU lasts: long enough
// that one scheduler tick more or less does not decide it, short enough
// that a quiet server costs half a second.
const settleStep = 500 * time.Millisecond

// Settled is what waiting for a quiet server found before a run: how long
// it waited and how busy the server was over its last look.
type Settled struct {
	// WaitedS is the seconds waited before the run began.
	WaitedS float64 `json:"waited_s" example:"3.5"`
	// CoresBusy is the cores the server kept busy over the last look;
	// Quiet says whether that was under the bound, or the wait ran out.
	CoresBusy float64 `json:"cores_busy" example:"0.02"`
	Quiet     bool    `json:"quiet" example:"true"`
	// Message says why the run began on a busy server, or why the server
	// could not be read.
	Message string `json:"message,omitempty" example:"the server still kept 0.98 of 1 core busy after 60s: the run began anyway"`
}

// Settle waits until the server spec names keeps less than below of its
// cores busy over one look (settleStep), for at most limit, and says what
// it found. A run that ends with requests in flight leaves them queued at
// the server, which goes on serving them for as long as the queue is
// deep: the next run would start against a busy server and measure its
// leftovers, not its own load. Waiting for the CPU to fall quiet is what
// restarting the server between runs did by hand. A scrape that fails or
// a server with no CPU series ends the wait at once: the run is never
// held up by its monitor.
func Settle(ctx context.Context, s *Scraper, spec Spec, below float64, limit time.Duration) Settled {
	if below <= 0 {
		below = DefaultSettleBelow
	}
	start := time.Now()
	waited := func() float64 { return time.Since(start).Seconds() }
	exp, at, err := scrapeAt(ctx, s, spec.Prometheus)
	if err != nil {
		return Settled{Message: "could not wait for a quiet server: " + err.Error()}
	}
	m := mean(spec, exp)
	prev := m.read(at, exp)
	if !prev.hasCPU {
		return Settled{Message: "could not wait for a quiet server: its endpoint gives no CPU series"}
	}
	cores := m.cores
	if cores <= 0 {
		cores = 1 // unknown: the bound reads as cores busy
	}
	deadline := start.Add(limit)
	for {
		step := min(settleStep, time.Until(deadline))
		if step <= 0 {
			step = settleStep // at least one look, however short the limit
		}
		t := time.NewTimer(step)
		select {
		case <-ctx.Done():
			t.Stop()
			return Settled{WaitedS: waited(), Message: "stopped waiting for a quiet server: " + ctx.Err().Error()}
		case <-t.C:
		}
		exp, at, err := scrapeAt(ctx, s, spec.Prometheus)
		if err != nil {
			return Settled{WaitedS: waited(), Message: "stopped waiting for a quiet server: " + err.Error()}
		}
		cur := m.read(at, exp)
		if !cur.hasCPU {
			return Settled{WaitedS: waited(), Message: "stopped waiting for a quiet server: its endpoint stopped giving its CPU series"}
		}
		busy := 0.0
		if dt := cur.at.Sub(prev.at).Seconds(); dt > 0 && cur.cpu >= prev.cpu {
			busy = (cur.cpu - prev.cpu) / dt
		}
		if busy < below*cores {
			return Settled{WaitedS: round3(waited()), CoresBusy: round2(busy), Quiet: true}
		}
		if !time.Now().Before(deadline) {
			word := "cores"
			if cores == 1 {
				word = "core"
			}
			return Settled{WaitedS: round3(waited()), CoresBusy: round2(busy), Message: fmt.Sprintf(
				"the server still kept %.2f of its %g %s busy after %v: the run began anyway",
				busy, cores, word, limit.Round(time.Millisecond))}
		}
		prev = cur
	}
}

// scrapeAt scrapes target and says when its counters were read: the
// endpoint read them somewhere between the request and the answer, and
// the middle is the best guess at when (a busy server may take a while
// to answer).
func scrapeAt(ctx context.Context, s *Scraper, target string) (Exposition, time.Time, error) {
	sent := time.Now()
	exp, err := s.Scrape(ctx, target)
	return exp, sent.Add(time.Since(sent) / 2), err
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
