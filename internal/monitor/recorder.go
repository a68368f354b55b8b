package monitor

import (
	"context"
	"sync"
	"time"
)

// Recorder scrapes one endpoint beside a run: once when started, once per
// interval, and once when stopped, in a goroutine of its own so the load
// never waits on a scrape (only its start and end do, each bounded by the
// scraper's timeout).
type Recorder struct {
	scraper *Scraper
	spec    Spec
	every   time.Duration

	mu       sync.Mutex
	meaning  *meaning
	counters []bool
	readings []reading
	scrapes  int
	failed   int
	firstErr error

	stop chan struct{}
	done chan struct{}
}

// Start scrapes spec.Prometheus now and then every interval until Stop. ctx
// bounds every scrape; the run's context is the right one.
func Start(ctx context.Context, s *Scraper, spec Spec, every time.Duration) *Recorder {
	if every <= 0 {
		every = time.Second
	}
	r := &Recorder{scraper: s, spec: spec, every: every, stop: make(chan struct{}), done: make(chan struct{})}
	r.scrape(ctx)
	go r.loop(ctx)
	return r
}

func (r *Recorder) loop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.scrape(ctx)
		case <-r.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// scrape takes one reading, or counts one failure.
func (r *Recorder) scrape(ctx context.Context) {
	exp, at, err := scrapeAt(ctx, r.scraper, r.spec.Prometheus)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scrapes++
	if err != nil {
		r.failed++
		if r.firstErr == nil {
			r.firstErr = err
		}
		return
	}
	if r.meaning == nil {
		r.meaning = mean(r.spec, exp)
		r.counters = r.meaning.counters(exp)
	}
	r.readings = append(r.readings, r.meaning.read(at, exp))
}

// Stop ends the interval scrapes, takes the last reading and returns what
// was recorded. ctx bounds the last scrape: pass one that outlives a
// canceled run, so a partial run still gets its end.
func (r *Recorder) Stop(ctx context.Context) *Recording {
	close(r.stop)
	<-r.done
	r.scrape(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Recording{source: Redacted(r.spec.Prometheus), meaning: r.meaning, counters: r.counters,
		readings: r.readings, scrapes: r.scrapes, failed: r.failed, firstErr: r.firstErr}
}
