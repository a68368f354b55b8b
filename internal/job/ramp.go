package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/measure"
)

// Rate is one value of sweep.rate: request starts per second, fixed (a
// JSON number, 1000, or a numeric string, "1000") or a linear ramp over the
// run's duration (a string "FROM:TO", "100:5000"). It reads both forms and
// writes a fixed rate as a number, a ramp as its string.
type Rate struct {
	From float64
	To   float64 // equal to From for a fixed rate
}

// FixedRate is the fixed rate r.
func FixedRate(r float64) Rate { return Rate{From: r, To: r} }

// Ramp reports whether r changes over the run.
func (r Rate) Ramp() bool {
	return r.To != r.From && !(math.IsNaN(r.To) && math.IsNaN(r.From)) // FixedRate(NaN) is no ramp
}

// String is r as a spec writes it: "1000" or "100:5000".
func (r Rate) String() string {
	s := strconv.FormatFloat(r.From, 'g', -1, 64)
	if r.Ramp() {
		s += ":" + strconv.FormatFloat(r.To, 'g', -1, 64)
	}
	return s
}

// MarshalJSON writes a fixed rate as a number and a ramp as "FROM:TO".
func (r Rate) MarshalJSON() ([]byte, error) {
	if r.Ramp() {
		return json.Marshal(r.String())
	}
	return json.Marshal(r.From)
}

// UnmarshalJSON reads a number, or a string of a number or "FROM:TO".
// Whether the values are allowed (positive, under the limit) is
// Validate's to say, with the field named.
func (r *Rate) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("job: rate: %w", err)
	}
	v, err := parseRate(raw)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

var errRateType = errors.New(`want requests per second (a number) or a ramp "FROM:TO" such as "100:5000"`)

// parseRate turns a decoded JSON value (json.Number or string) into a
// Rate; it is shared by UnmarshalJSON and the strict decoder.
func parseRate(raw any) (Rate, error) {
	switch v := raw.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return Rate{}, errRateType
		}
		return FixedRate(f), nil
	case string:
		from, to, ramp := strings.Cut(v, ":")
		a, errA := strconv.ParseFloat(strings.TrimSpace(from), 64)
		if errA != nil {
			return Rate{}, fmt.Errorf("%q: %w", v, errRateType)
		}
		if !ramp {
			return FixedRate(a), nil
		}
		b, errB := strconv.ParseFloat(strings.TrimSpace(to), 64)
		if errB != nil {
			return Rate{}, fmt.Errorf("%q: %w", v, errRateType)
		}
		return Rate{From: a, To: b}, nil
	}
	return Rate{}, errRateType
}

// Stage is one leg of a job's stages, as k6's ramping executors take
// them: over Duration the rate (rate stages: the open model, k6's
// ramping-arrival-rate) or the number of connections (concurrency
// stages: the closed model, k6's ramping-vus) goes linearly from the
// previous stage's value (zero before the first) to the stage's own. A
// stage of duration 0 jumps to its value. Every stage sets exactly one of
// Rate and Concurrency, and all the same one.
type Stage struct {
	Rate        float64  `json:"rate,omitempty" example:"2000"`
	Concurrency int      `json:"concurrency,omitempty" example:"100"`
	Duration    Duration `json:"duration" swaggertype:"string" example:"30s"`
}

// stagesPlan gives the engine's stages for s's stages.
func stagesPlan(stages []Stage) []measure.Stage {
	out := make([]measure.Stage, len(stages))
	for i, st := range stages {
		out[i] = measure.Stage{Duration: st.Duration.Std(), Rate: st.Rate, Concurrency: st.Concurrency}
	}
	return out
}

// concurrencyStages reports whether s ramps the closed model's
// concurrency rather than the open model's rate.
func concurrencyStages(stages []Stage) bool {
	return len(stages) > 0 && stages[0].Concurrency > 0
}

// stagesTotal is how long stages last, saturating.
func stagesTotal(stages []Stage) Duration {
	var d Duration
	for _, st := range stages {
		if st.Duration > 0 {
			d = Duration(addSat(d.Std(), st.Duration.Std()))
		}
	}
	return d
}

// stagesAxes are every target's values under the spec's stages: one
// point per target and sweep.concurrency value, lasting the stages'
// total. A rate-stage point's Rate is the stages' highest (it runs the
// open model); a concurrency-stage point's Concurrency is theirs.
func (s Spec) stagesAxes(a *targetAxes) {
	var peakRate float64
	var peakConc int
	for _, st := range s.Stages {
		peakRate, peakConc = max(peakRate, st.Rate), max(peakConc, st.Concurrency)
	}
	a.stops = oneAxis("stages", []stop{{duration: stagesTotal(s.Stages)}})
	if concurrencyStages(s.Stages) {
		a.rates = oneAxis("stages", []Rate{{}})
		a.conc = oneAxis("stages", []int{peakConc})
		return
	}
	a.rates = oneAxis("stages", []Rate{FixedRate(peakRate)})
	if len(s.Sweep.Concurrency) == 0 && len(a.src.concurrency) == 0 {
		// The default for the open model: Sweep.axes saw no rate.
		a.conc = oneAxis("sweep.concurrency", []int{DefaultOpenConcurrency})
	}
}

// stages checks the spec's stages, each problem named by its field.
func (v *validator) stages(s Spec, res []resolved) {
	if len(s.Stages) == 0 {
		return
	}
	conc := concurrencyStages(s.Stages)
	var peak float64
	for i, st := range s.Stages {
		field := index("stages", i)
		if st.Duration < 0 {
			v.add(field+".duration", "%v is negative", st.Duration)
		}
		switch {
		case st.Rate != 0 && st.Concurrency != 0, i == 0 && st.Rate == 0 && st.Concurrency == 0:
			v.add(field, "set one of rate or concurrency")
		case conc && st.Rate != 0:
			v.add(field+".rate", "stages[0] ramps the concurrency: every stage sets a concurrency")
		case !conc && st.Concurrency != 0:
			v.add(field+".concurrency", "stages[0] ramps the rate: every stage sets a rate")
		case math.IsNaN(st.Rate) || math.IsInf(st.Rate, 0) || st.Rate < 0:
			v.add(field+".rate", "rate %v is not a non-negative number", st.Rate)
		case st.Rate > v.lim.MaxRate:
			v.add(field+".rate", "rate %v is above the limit of %v per second", st.Rate, v.lim.MaxRate)
		case st.Concurrency < 0:
			v.add(field+".concurrency", "concurrency %d is below 0", st.Concurrency)
		case st.Concurrency > v.lim.MaxConcurrency:
			v.add(field+".concurrency", "concurrency %d is above the limit of %d", st.Concurrency, v.lim.MaxConcurrency)
		}
		peak = max(peak, st.Rate, float64(st.Concurrency))
	}
	switch total := stagesTotal(s.Stages); {
	case total <= 0:
		v.add("stages", "the stages last no time: give each a duration")
	case total.Std() > v.lim.MaxDuration:
		v.add("stages", "the stages last %v, above the limit of %v", total, v.lim.MaxDuration)
	}
	if peak <= 0 {
		v.add("stages", "every stage is at zero: nothing would be sent")
	}
	v.stagesExclude(s, res, conc)
}

// stagesExclude refuses what cannot go with stages: the stages set each
// run's load and length.
func (v *validator) stagesExclude(s Spec, res []resolved, conc bool) {
	w := s.Sweep
	for _, f := range []struct {
		name string
		set  bool
	}{{"sweep.requests", len(w.Requests) > 0}, {"sweep.duration", len(w.Duration) > 0}, {"sweep.rate", len(w.Rate) > 0}, {"sweep.concurrency", conc && len(w.Concurrency) > 0}} {
		if f.set {
			v.add(f.name, "stages set each run's load and length: leave %s out", f.name)
		}
	}
	if w.Shards > 1 {
		v.add("sweep.shards", "a staged run runs on one worker process")
	}
	if s.Warmup > 0 {
		v.add("warmup", "a ramp has no steady window to measure after a warm-up")
	}
	for i, r := range res {
		if len(r.errs) == 0 && r.src.req.HTTPVersion == measure.HTTP2 {
			v.add("stages", "target %q speaks HTTP/2, on which ramps are not supported yet", s.Targets[i].Name)
		}
	}
}

// sameStart refuses a ramp that starts where another of the sweep's rates
// does (fixed or ramped, but not the same): reports and the analysis tell
// a sweep's points apart by the rate they start at, and would take the
// two for one.
func sameStart(v *validator, rates []Rate) {
	first := make(map[float64]int, len(rates))
	for i, r := range rates {
		j, seen := first[r.From]
		switch {
		case !seen:
			first[r.From] = i
		case r != rates[j] && (r.Ramp() || rates[j].Ramp()):
			v.add(index("sweep.rate", i), "starts where sweep.rate[%d] does: give each ramp its own start rate", j)
		}
	}
}

// rateRamp checks what a sweep.rate ramp needs: a duration to ramp over,
// and one worker process.
func (v *validator) rateRamp(w Sweep, field string, r Rate) {
	if !r.Ramp() {
		return
	}
	if len(w.Duration) == 0 {
		v.add(field, "the ramp %s runs over the run's duration: give sweep.duration", r)
	}
	if w.Shards > 1 {
		v.add(field, "a ramp runs on one worker process: leave sweep.shards out")
	}
}
