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

// startMonitor starts scraping p's target's metrics endpoint, once now
// and then every timeline interval of plan, or returns nil when the
// target names none. A sharded run is scraped once, by its coordinator:
// the shards load one server, and scraping it from every shard would
// count its CPU n times.
func (sw *sweep) startMonitor(p job.Point, plan measure.Plan) *monitor.Recorder {
	spec := sw.planner.Monitor(p)
	if spec == nil {
		return nil
	}
	every := plan.TimelineInterval
	if every <= 0 {
		every = measure.DefaultTimelineInterval
	}
	return monitor.Start(sw.watch.ctx, sw.r.scraper, *spec, every)
}

// serverOf stops rec, taking its last scrape, and reads what it recorded
// against m; nil without a recorder. With m nil (the run failed) it only
// stops rec.
func (sw *sweep) serverOf(rec *monitor.Recorder, m *measure.Measurement) *monitor.Server {
	if rec == nil {
		return nil
	}
	ctx, cancel := detached(sw.ctx)
	defer cancel()
	recording := rec.Stop(ctx)
	if m == nil {
		return nil
	}
	run := monitor.Run{From: m.Started, To: m.Started.Add(m.Elapsed), Requests: m.Complete}
	if tl := m.Timeline; tl != nil {
		run.Start, run.Interval, run.N = tl.Start, tl.Interval, len(tl.Intervals)
	}
	return recording.Server(run)
}
