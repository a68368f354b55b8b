package analysis

import (
	"fmt"
	"math"
	"strconv"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/monitor"
)

// ServerCPUBound is the share of its cores a target must keep busy for
// its CPU to count as the limit: a server at 90 % has no core to spare
// for a burst, and the scrapes' interpolation and the kernel's tick
// blur a few percent.
const ServerCPUBound = 0.90

// Values of job.PointSummary.LimitedBy.
const (
	LimitedByClient    = "client"
	LimitedByServerCPU = "server_cpu"
	LimitedByNeither   = "neither"
)

// judgeLimit sets the point's server CPU, from its runs' monitor
// readings, and what limited it. The client comes first: when the load
// generator was short of CPU, req/s measures it, whatever the server did.
func judgeLimit(ps *job.PointSummary, servers []*monitor.Server) {
	var busy, share []float64
	for _, s := range servers {
		if s != nil && s.Settled != nil && !s.Settled.Quiet {
			ps.BusyStarts++
		}
		if s == nil || s.CoresBusy == nil {
			continue
		}
		busy = append(busy, *s.CoresBusy)
		if s.CPUShare != nil {
			share = append(share, *s.CPUShare)
			ps.ServerCores = s.Cores
		}
	}
	if len(busy) > 0 {
		st := newStat(busy)
		ps.ServerCoresBusy = &st
	}
	if len(share) > 0 {
		st := newStat(share)
		ps.ServerCPUShare = &st
	}
	switch {
	case ps.ClientSaturated:
		ps.LimitedBy = LimitedByClient
	case ps.ServerCPUShare == nil:
		ps.LimitedBy = ""
	case ps.ServerCPUShare.Mean >= ServerCPUBound:
		ps.LimitedBy = LimitedByServerCPU
	default:
		ps.LimitedBy = LimitedByNeither
	}
}

// serverLimit returns the lowest concurrency of the series (sorted by
// concurrency) whose point the server's CPU limited, and the saturation
// sentence's clause about the server: "; 1.2 of 1 core busy from c = 8:
// server CPU is the limit", or, when the last point had headroom on both
// sides, that the limit is elsewhere. Without server CPU readings, no
// clause.
func serverLimit(s []job.PointSummary) (*int, string) {
	for _, p := range s {
		if p.LimitedBy == LimitedByServerCPU {
			c := p.Point.Concurrency
			return &c, fmt.Sprintf("; %s busy from c = %d: server CPU is the limit", coresBusy(p), c)
		}
	}
	last := s[len(s)-1]
	if last.LimitedBy == LimitedByNeither {
		return nil, fmt.Sprintf("; %s busy at c = %d: the server's CPU had headroom, so the limit is elsewhere (latency, the network, locks or a queue)",
			coresBusy(last), last.Point.Concurrency)
	}
	return nil, ""
}

// coresBusy writes "1.2 of 1 core".
func coresBusy(p job.PointSummary) string {
	unit := "cores"
	if p.ServerCores == 1 {
		unit = "core"
	}
	return fmt.Sprintf("%s of %s %s", roughly2(p.ServerCoresBusy.Mean), roughly2(p.ServerCores), unit)
}

// roughly2 writes a core count to two significant digits: 0.97, 1.2, 16.
func roughly2(v float64) string {
	scale := 100.0
	switch {
	case v >= 10:
		scale = 1
	case v >= 1:
		scale = 10
	}
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64)
}
