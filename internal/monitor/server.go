package monitor

import (
	"fmt"
	"strings"
	"time"
)

// Server is what a run's scrapes say of the server: stored with the run.
// A number the endpoint did not give is left out (nil).
type Server struct {
	// Source is the endpoint scraped.
	Source string `json:"source" example:"http://127.0.0.1:9100/metrics"`
	// CPUSelector and MemorySelector name the series counted, chosen by
	// the spec or by default from what the endpoint exposes.
	CPUSelector    string `json:"cpu_selector,omitempty" example:"node_cpu_seconds_total{mode!=\"idle\"}"`
	MemorySelector string `json:"memory_selector,omitempty" example:"process_resident_memory_bytes"`
	// CPUSeconds is the CPU time the server used from the first scrape to
	// the last; CoresBusy that over the same wall-clock time, the average
	// number of cores it kept busy.
	CPUSeconds *float64 `json:"cpu_seconds,omitempty" example:"1.92"`
	CoresBusy  *float64 `json:"cores_busy,omitempty" example:"0.96"`
	// Cores is how many cores the server has, and CoresFrom where that
	// came from: "spec" (monitor.cores), "node_cpu_seconds_total" (its
	// cpu labels) or "go_sched_gomaxprocs_threads" (a Go server's
	// GOMAXPROCS). CPUShare is CoresBusy / Cores, 0..1.
	Cores     float64  `json:"cores,omitempty" example:"1"`
	CoresFrom string   `json:"cores_from,omitempty" example:"spec"`
	CPUShare  *float64 `json:"cpu_share,omitempty" example:"0.96"`
	// CPUMsPerRequest is CPUSeconds in milliseconds over the run's
	// completed requests.
	CPUMsPerRequest *float64 `json:"cpu_ms_per_request,omitempty" example:"0.08"`
	// MemoryBytes is the memory at the last scrape, MemoryPeakBytes the
	// largest any scrape saw.
	MemoryBytes     *float64 `json:"memory_bytes,omitempty" example:"10485760"`
	MemoryPeakBytes *float64 `json:"memory_peak_bytes,omitempty" example:"12582912"`
	// Scrapes counts the scrapes tried, ScrapeErrors those that failed;
	// Message says what went wrong, if anything. A failed scrape never
	// fails the run.
	Scrapes      int    `json:"scrapes" example:"12"`
	ScrapeErrors int    `json:"scrape_errors" example:"0"`
	Message      string `json:"message,omitempty" example:"1 of 12 scrapes failed, the first: http://127.0.0.1:9100/metrics answered 503 Service Unavailable"`
	// Timeline is the recorded series per interval of the run's timeline.
	Timeline *ServerTimeline `json:"timeline,omitempty"`
	// Settled is what waiting for a quiet server found before the run
	// (sweep.settle).
	Settled *Settled `json:"settled,omitempty"`
}

// ServerTimeline holds the server's series on the run's timeline: entry i
// is interval i of the run's timeline, cut at the same instants.
// Counters (CPU, counter series) are their increase over the interval,
// read off the scrapes around its ends by linear interpolation; gauges
// (memory, gauge series) the last value scraped by the interval's end. A
// null is an interval no scrape covered.
type ServerTimeline struct {
	IntervalMs  int64          `json:"interval_ms" example:"1000"`
	CPUSeconds  []*float64     `json:"cpu_seconds,omitempty"`
	MemoryBytes []*float64     `json:"memory_bytes,omitempty"`
	Series      []SeriesValues `json:"series,omitempty"`
}

// SeriesValues is one of the spec's extra series per interval.
type SeriesValues struct {
	Selector string     `json:"selector" example:"nginx_http_requests_total"`
	Counter  bool       `json:"counter"`
	Values   []*float64 `json:"values"`
}

// Run is what the server's numbers are read against: the run's measured
// span (From, To), its completed requests, and its timeline's grid, N
// intervals of Interval from Start (zero Interval: no timeline).
type Run struct {
	From, To time.Time
	Requests int64
	Start    time.Time
	Interval time.Duration
	N        int
}

// Recording is what a Recorder scraped.
type Recording struct {
	source   string
	meaning  *meaning
	counters []bool
	readings []reading
	scrapes  int
	failed   int
	firstErr error
}

// Server sums the recording up for run. The CPU figures cover the run's
// span, the counter interpolated between the scrapes around its ends
// (the first scrape is taken before the load starts, the last after it
// ends), so a sharded run's wait for its shards does not count.
func (rec *Recording) Server(run Run) *Server {
	s := &Server{Source: rec.source, Scrapes: rec.scrapes, ScrapeErrors: rec.failed}
	var notes []string
	if rec.failed > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d scrapes failed, the first: %s", rec.failed, rec.scrapes, trimScrape(rec.firstErr)))
	}
	if m := rec.meaning; m != nil {
		s.Cores, s.CoresFrom = m.cores, m.coresFrom
		if m.memory != nil {
			s.MemorySelector = m.memory.String()
		} else if m.nodeUsed {
			s.MemorySelector = nodeMemoryUsed
		}
		if m.cpu != nil {
			s.CPUSelector = m.cpu.String()
		}
		notes = append(notes, rec.cpu(s, run)...)
		rec.memory(s)
		if run.Interval > 0 && run.N > 0 {
			s.Timeline = rec.timeline(run)
		}
	}
	s.Message = strings.Join(notes, "; ")
	return s
}

// cpu fills the run's CPU figures; it returns why it could not.
func (rec *Recording) cpu(s *Server, run Run) []string {
	if rec.meaning.cpu == nil {
		return []string{fmt.Sprintf("no CPU series: %s exposes none of %s, %s, %s; name one in monitor.cpu",
			rec.source, namedCPU, nodeCPU, processCPU)}
	}
	pts := rec.points(func(r reading) (float64, bool) { return r.cpu, r.hasCPU })
	if len(pts) < 2 {
		return []string{fmt.Sprintf("CPU unknown: %s matched in fewer than two scrapes", s.CPUSelector)}
	}
	for k := 1; k < len(pts); k++ {
		if pts[k].v < pts[k-1].v {
			return []string{"CPU unknown: the CPU counter went down (did the server restart?)"}
		}
	}
	from, to := run.From, run.To
	if from.IsZero() || !to.After(from) { // no span given: the scrapes'
		from, to = pts[0].at, pts[len(pts)-1].at
	}
	from, to = clamp(from, pts), clamp(to, pts)
	used := at(pts, to) - at(pts, from)
	s.CPUSeconds = ptr(used)
	if wall := to.Sub(from).Seconds(); wall > 0 {
		s.CoresBusy = ptr(used / wall)
		if s.Cores > 0 {
			s.CPUShare = ptr(used / wall / s.Cores)
		}
	}
	if run.Requests > 0 {
		s.CPUMsPerRequest = ptr(used * 1000 / float64(run.Requests))
	}
	return nil
}

func (rec *Recording) memory(s *Server) {
	pts := rec.points(func(r reading) (float64, bool) { return r.memory, r.hasMemory })
	if len(pts) == 0 {
		return
	}
	peak := pts[0].v
	for _, p := range pts {
		peak = max(peak, p.v)
	}
	s.MemoryBytes, s.MemoryPeakBytes = ptr(pts[len(pts)-1].v), ptr(peak)
}

// clamp keeps t within the scrapes: outside them nothing is known.
func clamp(t time.Time, pts []point) time.Time {
	switch first, last := pts[0].at, pts[len(pts)-1].at; {
	case t.Before(first):
		return first
	case t.After(last):
		return last
	}
	return t
}

func (rec *Recording) timeline(g Run) *ServerTimeline {
	t := &ServerTimeline{IntervalMs: g.Interval.Milliseconds()}
	if rec.meaning.cpu != nil {
		t.CPUSeconds = increases(g, rec.points(func(r reading) (float64, bool) { return r.cpu, r.hasCPU }))
	}
	t.MemoryBytes = lasts(g, rec.points(func(r reading) (float64, bool) { return r.memory, r.hasMemory }))
	for i, sel := range rec.meaning.series {
		pts := rec.points(func(r reading) (float64, bool) { return r.series[i], r.hasSeries[i] })
		sv := SeriesValues{Selector: sel.String(), Counter: rec.counters[i]}
		if sv.Counter {
			sv.Values = increases(g, pts)
		} else {
			sv.Values = lasts(g, pts)
		}
		t.Series = append(t.Series, sv)
	}
	return t
}

// point is one scrape's value of one series.
type point struct {
	at time.Time
	v  float64
}

func (rec *Recording) points(get func(reading) (float64, bool)) []point {
	var out []point
	for _, r := range rec.readings {
		if v, ok := get(r); ok {
			out = append(out, point{r.at, v})
		}
	}
	return out
}

// increases cuts a counter on the grid: interval i gets the counter's
// interpolated value at its end minus that at its start. Ends outside
// the scrapes are clamped to them, so the intervals add up to the
// increase the scrapes saw within the timeline; an interval wholly
// outside them is null.
func increases(g Run, pts []point) []*float64 {
	out := make([]*float64, g.N)
	if len(pts) < 2 {
		return out
	}
	first, last := pts[0].at, pts[len(pts)-1].at
	for i := range g.N {
		from := g.Start.Add(time.Duration(i) * g.Interval)
		to := from.Add(g.Interval)
		if !to.After(first) || !from.Before(last) {
			continue
		}
		out[i] = ptr(max(0, at(pts, to)-at(pts, from)))
	}
	return out
}

// at interpolates the counter linearly between the scrapes around t,
// clamped to the first and last.
func at(pts []point, t time.Time) float64 {
	if !t.After(pts[0].at) {
		return pts[0].v
	}
	for k := 1; k < len(pts); k++ {
		if !t.After(pts[k].at) {
			a, b := pts[k-1], pts[k]
			span := b.at.Sub(a.at).Seconds()
			if span <= 0 {
				return b.v
			}
			return a.v + (b.v-a.v)*t.Sub(a.at).Seconds()/span
		}
	}
	return pts[len(pts)-1].v
}

// lasts cuts a gauge on the grid: interval i gets the last value scraped
// by its end, null before the first scrape.
func lasts(g Run, pts []point) []*float64 {
	out := make([]*float64, g.N)
	k := -1
	for i := range g.N {
		end := g.Start.Add(time.Duration(i+1) * g.Interval)
		for k+1 < len(pts) && !pts[k+1].at.After(end) {
			k++
		}
		if k >= 0 {
			out[i] = ptr(pts[k].v)
		}
	}
	return out
}

func ptr(v float64) *float64 { return &v }

// trimScrape drops the sentinel's prefix from a scrape error for the
// message a reader sees.
func trimScrape(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimPrefix(err.Error(), ErrScrape.Error()+": ")
}
