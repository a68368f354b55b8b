package job

import (
	"time"
)

// cell is a point with the fields its values came from, so validation can
// name the list entry behind a bad combination.
type cell struct {
	Point
	concField, stopField, rateField string
	timeout                         time.Duration
}

// axis is one target's list of values for one sweep dimension.
type axis[T any] struct {
	values []T
	fields []string
}

func listAxis[T any](field string, values []T) axis[T] {
	a := axis[T]{values: values}
	for i := range values {
		a.fields = append(a.fields, index(field, i))
	}
	return a
}

func oneAxis[T any](field string, values []T) axis[T] {
	return axis[T]{values: values, fields: repeatString(field, len(values))}
}

// Points expands the sweep into its points, in a fixed order with Index
// equal to the position. Dimensions nest, outermost first: concurrency,
// requests or duration, rate, target; so the targets of one cell are
// adjacent and an interleaved schedule spreads drift over all of them.
//
// Each target takes concurrency from sweep.concurrency when it is listed,
// else from its own flags (ab -c, http_load -parallel), else the default;
// and requests/duration/rate from the sweep when it lists any of them, else
// from its own flags (ab -n/-t, http_load -fetches/-seconds/-rate), else
// the default of 100 requests. A spec's stages replace requests, duration
// and rate for every target (and concurrency, for concurrency stages): one
// point per target and concurrency. Targets whose form is invalid are left out.
// Call Validate first: it bounds the number of points; Points does not.
func (s Spec) Points() []Point { return s.expansion().Points() }

// targetAxes is one target's values for every dimension.
type targetAxes struct {
	conc  axis[int]
	stops axis[stop]
	rates axis[Rate]
	src   source
}

// resolved is one target of a spec as resolveTarget gives it.
type resolved struct {
	src  source
	errs []FieldError
}

// resolveAll resolves every target of a defaulted spec once: an ab line
// costs many times its length to parse, so Validate and a Planner parse
// each one once.
func (s Spec) resolveAll() []resolved {
	out := make([]resolved, len(s.Targets))
	for i := range s.Targets {
		out[i].src, out[i].errs = s.resolveTarget(i)
	}
	return out
}

func (s Spec) axesOf(res []resolved) []*targetAxes {
	per := make([]*targetAxes, len(s.Targets))
	for i, r := range res {
		if len(r.errs) > 0 {
			continue
		}
		src := r.src
		a := &targetAxes{src: src}
		a.conc, a.stops, a.rates = s.Sweep.axes(src)
		if len(s.Stages) > 0 {
			s.stagesAxes(a)
		}
		per[i] = a
	}
	return per
}

// pointCount is the number of points without expanding them, so a spec
// asking for billions is refused before any is built.
func pointCount(per []*targetAxes) int {
	n := 0
	for _, a := range per {
		if a != nil {
			n += len(a.conc.values) * len(a.stops.values) * len(a.rates.values)
		}
	}
	return n
}

func (s Spec) expand(per []*targetAxes) []cell {
	var maxC, maxS, maxR int
	for _, a := range per {
		if a != nil {
			maxC, maxS, maxR = max(maxC, len(a.conc.values)), max(maxS, len(a.stops.values)), max(maxR, len(a.rates.values))
		}
	}
	cells := make([]cell, 0, pointCount(per))
	for ci := range maxC {
		for si := range maxS {
			for ri := range maxR {
				for ti, a := range per {
					if a == nil || ci >= len(a.conc.values) || si >= len(a.stops.values) || ri >= len(a.rates.values) {
						continue
					}
					cells = append(cells, a.cell(len(cells), s.Targets[ti].Name, ti, ci, si, ri))
				}
			}
		}
	}
	return cells
}

func (a *targetAxes) cell(i int, name string, target, ci, si, ri int) cell {
	st, rate := a.stops.values[si], a.rates.values[ri]
	var rateTo float64
	if rate.Ramp() {
		rateTo = rate.To
	}
	return cell{
		Point: Point{
			Index: i, Target: name, TargetIndex: target,
			Concurrency: a.conc.values[ci], Requests: st.requests, Duration: st.duration,
			Rate: rate.From, RateTo: rateTo,
		},
		concField: a.conc.fields[ci], stopField: a.stops.fields[si], rateField: a.rates.fields[ri],
		timeout: a.src.req.Timeout.Std(),
	}
}

// axes returns the values one target runs with, following the precedence
// documented on Points.
func (w Sweep) axes(src source) (axis[int], axis[stop], axis[Rate]) {
	var conc axis[int]
	switch {
	case len(w.Concurrency) > 0:
		conc = listAxis("sweep.concurrency", w.Concurrency)
	case len(src.concurrency) > 0:
		conc = oneAxis(src.flagField, src.concurrency)
	}
	var stops axis[stop]
	var rates axis[Rate]
	switch {
	case w.hasStops():
		stops = w.stopAxis()
		rates = listAxis("sweep.rate", w.Rate)
	case len(src.stops) > 0 || len(src.rates) > 0:
		stops = oneAxis(src.flagField, src.stops)
		rates = oneAxis(src.flagField, src.rates)
	default:
		stops = oneAxis("sweep.requests", []stop{{requests: DefaultRequests}})
	}
	if len(rates.values) == 0 {
		rates = oneAxis("sweep.rate", []Rate{{}}) // closed model
	}
	if len(stops.values) == 0 { // a rate with no end: Validate refuses it
		field := "sweep.requests"
		if !w.hasStops() && src.flagField != "" {
			field = src.flagField
		}
		stops = oneAxis(field, []stop{{}})
	}
	if len(conc.values) == 0 {
		c := DefaultConcurrency
		if rates.values[0].From > 0 {
			c = DefaultOpenConcurrency
		}
		conc = oneAxis("sweep.concurrency", []int{c})
	}
	return conc, stops, rates
}

// stopAxis lists the sweep's requests, then its durations (Validate
// refuses a sweep with both).
func (w Sweep) stopAxis() axis[stop] {
	var a axis[stop]
	for i, n := range w.Requests {
		a.values = append(a.values, stop{requests: n})
		a.fields = append(a.fields, index("sweep.requests", i))
	}
	for i, d := range w.Duration {
		a.values = append(a.values, stop{duration: d})
		a.fields = append(a.fields, index("sweep.duration", i))
	}
	return a
}

// Schedule lists every run of the job in execution order. Interleaved:
// repeat k of every point before repeat k+1. Sequential: all repeats of a
// point before the next point.
func (s Spec) Schedule() []RunKey { return s.expansion().Schedule() }

// Schedule is Spec.Schedule.
func (pl *Planner) Schedule() []RunKey {
	points := len(pl.cells)
	repeats := max(pl.spec.Sweep.Repeats, 0)
	runs := make([]RunKey, 0, points*repeats)
	if pl.spec.Sweep.Order == OrderSequential {
		for p := range points {
			for r := range repeats {
				runs = append(runs, RunKey{Point: p, Repeat: r})
			}
		}
		return runs
	}
	for r := range repeats {
		for p := range points {
			runs = append(runs, RunKey{Point: p, Repeat: r})
		}
	}
	return runs
}
