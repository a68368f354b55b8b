package worker

import (
	"net"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/netguard"
)

// newScraper is the scraper of the targets' metrics endpoints: through
// the address policy, as the load and the webhooks go.
func newScraper(p *netguard.Policy, res netguard.Resolver) *monitor.Scraper {
	if p == nil { // a Runner built without Config's defaults (tests)
		p = netguard.LoopbackOnly()
	}
	d := &netguard.Dialer{Policy: p, Resolver: res, Dialer: &net.Dialer{Control: p.Control}}
	return monitor.NewScraper(monitor.ScraperConfig{Dial: d.DialContext})
}

// monitored is a run's monitor: the recorder scraping its target's
// metrics endpoint, and what waiting for a quiet server found before the
// run (nil without sweep.settle).
type monitored struct {
	rec     *monitor.Recorder
	settled *monitor.Settled
}

// settle waits, with sweep.settle, until p's server falls quiet and says
// what it found; nil without a monitor or settle. It is called right
// before the load (after any warm-up), and before a sharded run's shards
// are sent for, whose start it would otherwise hold up.
func (sw *sweep) settle(p job.Point) *monitor.Settled {
	spec, w := sw.planner.Monitor(p), sw.job.Spec.Sweep
	if spec == nil || w.Settle <= 0 {
		return nil
	}
	s := monitor.Settle(sw.watch.ctx, sw.r.scraper, *spec, w.SettleBelow, w.Settle.Std())
	return &s
}

// startMonitor starts scraping p's target's metrics endpoint, once now
// and then every timeline interval of plan, or returns nil when the
// target names none; settled goes with what it records. A sharded run is
// scraped once, by its coordinator: the shards load one server, and
// scraping it from every shard would count its CPU n times.
func (sw *sweep) startMonitor(p job.Point, plan measure.Plan, settled *monitor.Settled) *monitored {
	spec := sw.planner.Monitor(p)
	if spec == nil {
		return nil
	}
	every := plan.TimelineInterval
	if every <= 0 {
		every = measure.DefaultTimelineInterval
	}
	return &monitored{rec: monitor.Start(sw.watch.ctx, sw.r.scraper, *spec, every), settled: settled}
}

// serverOf stops mon's recorder, taking its last scrape, and reads what
// it recorded against m; nil without a monitor. With m nil (the run
// failed) it only stops the recorder.
func (sw *sweep) serverOf(mon *monitored, m *measure.Measurement) *monitor.Server {
	if mon == nil {
		return nil
	}
	ctx, cancel := detached(sw.ctx)
	defer cancel()
	recording := mon.rec.Stop(ctx)
	if m == nil {
		return nil
	}
	run := monitor.Run{From: m.Started, To: m.Started.Add(m.Elapsed), Requests: m.Complete}
	if tl := m.Timeline; tl != nil {
		run.Start, run.Interval, run.N = tl.Start, tl.Interval, len(tl.Intervals)
	}
	server := recording.Server(run)
	if server != nil {
		server.Settled = mon.settled
	}
	return server
}
