package monitor

import (
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Names of the series the defaults look for.
const (
	processCPU     = "process_cpu_seconds_total"
	processMemory  = "process_resident_memory_bytes"
	namedCPU       = "namedprocess_namegroup_cpu_seconds_total"
	namedMemory    = "namedprocess_namegroup_memory_bytes"
	nodeCPU        = "node_cpu_seconds_total"
	nodeMemTotal   = "node_memory_MemTotal_bytes"
	nodeMemAvail   = "node_memory_MemAvailable_bytes"
	goMaxProcs     = "go_sched_gomaxprocs_threads"
	nodeMemoryUsed = nodeMemTotal + " - " + nodeMemAvail
)

// Where Server.Cores came from.
const (
	CoresFromSpec       = "spec"
	CoresFromNodeCPU    = nodeCPU
	CoresFromGoMaxProcs = goMaxProcs
)

// meaning is a Spec read against an endpoint's first exposition: the
// selectors the defaults chose and the cores it says the server has.
type meaning struct {
	cpu       *Selector
	memory    *Selector
	nodeUsed  bool // memory is node_exporter's MemTotal - MemAvailable
	series    []Selector
	cores     float64
	coresFrom string
}

// mean fixes what spec means against exp: an explicit selector as given,
// else the first default exp exposes.
func mean(spec Spec, exp Exposition) *meaning {
	m := &meaning{}
	if spec.CPU != "" {
		sel, _ := ParseSelector(spec.CPU) // validated with the job
		m.cpu = &sel
	} else {
		m.cpu = defaultCPU(exp)
	}
	switch {
	case spec.Memory != "":
		sel, _ := ParseSelector(spec.Memory)
		m.memory = &sel
	case exp[namedMemory] != nil:
		m.memory = &Selector{Name: namedMemory, Matchers: []Matcher{{Label: "memtype", Op: MatchEqual, Value: "resident"}}}
	case exp[nodeMemTotal] != nil && exp[nodeMemAvail] != nil:
		m.nodeUsed = true
	case exp[processMemory] != nil:
		m.memory = &Selector{Name: processMemory}
	}
	for _, s := range spec.Series {
		sel, _ := ParseSelector(s)
		m.series = append(m.series, sel)
	}
	switch {
	case spec.Cores > 0:
		m.cores, m.coresFrom = spec.Cores, CoresFromSpec
	case nodeCores(exp) > 0:
		m.cores, m.coresFrom = float64(nodeCores(exp)), CoresFromNodeCPU
	case m.cpu != nil && m.cpu.Name == processCPU:
		// A Go server's own GOMAXPROCS, which Go sets from its CPU
		// affinity and cgroup quota; an exporter's would be the
		// exporter's, hence only beside the process's own CPU.
		if v, _, ok := value(Selector{Name: goMaxProcs}, exp); ok && v > 0 {
			m.cores, m.coresFrom = v, CoresFromGoMaxProcs
		}
	}
	return m
}

// defaultCPU picks the exporters' series before process_cpu_seconds_total:
// every exporter built on client_golang exposes its own process's too,
// which would count the exporter, not the server.
func defaultCPU(exp Exposition) *Selector {
	switch {
	case exp[namedCPU] != nil:
		return &Selector{Name: namedCPU}
	case exp[nodeCPU] != nil:
		return &Selector{Name: nodeCPU, Matchers: []Matcher{{Label: "mode", Op: MatchNotEqual, Value: "idle"}}}
	case exp[processCPU] != nil:
		return &Selector{Name: processCPU}
	}
	return nil
}

// nodeCores counts the distinct cpu labels of node_cpu_seconds_total.
func nodeCores(exp Exposition) int {
	f := exp[nodeCPU]
	if f == nil {
		return 0
	}
	seen := map[string]bool{}
	for _, mt := range f.GetMetric() {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "cpu" {
				seen[l.GetValue()] = true
			}
		}
	}
	return len(seen)
}

// value sums the series sel matches in exp; counter says every matched
// family is a counter. ok is false when nothing matched.
func value(sel Selector, exp Exposition) (v float64, counter, ok bool) {
	f := exp[sel.Name]
	if f == nil {
		return 0, false, false
	}
	for _, mt := range f.GetMetric() {
		if !sel.matches(mt.GetLabel()) {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			v += mt.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			v += mt.GetGauge().GetValue()
		case dto.MetricType_UNTYPED:
			v += mt.GetUntyped().GetValue()
		default: // a summary or histogram has no one value
			continue
		}
		ok = true
	}
	return v, f.GetType() == dto.MetricType_COUNTER, ok
}

// reading is what one scrape said.
type reading struct {
	at        time.Time
	cpu       float64
	hasCPU    bool
	memory    float64
	hasMemory bool
	series    []float64
	hasSeries []bool
}

// read takes a reading of exp as m means it.
func (m *meaning) read(at time.Time, exp Exposition) reading {
	r := reading{at: at, series: make([]float64, len(m.series)), hasSeries: make([]bool, len(m.series))}
	if m.cpu != nil {
		r.cpu, _, r.hasCPU = value(*m.cpu, exp)
	}
	switch {
	case m.memory != nil:
		r.memory, _, r.hasMemory = value(*m.memory, exp)
	case m.nodeUsed:
		total, _, ok1 := value(Selector{Name: nodeMemTotal}, exp)
		avail, _, ok2 := value(Selector{Name: nodeMemAvail}, exp)
		r.memory, r.hasMemory = total-avail, ok1 && ok2
	}
	for i, sel := range m.series {
		r.series[i], _, r.hasSeries[i] = value(sel, exp)
	}
	return r
}

// counters says, per series, whether it is a counter in exp.
func (m *meaning) counters(exp Exposition) []bool {
	out := make([]bool, len(m.series))
	for i, sel := range m.series {
		_, out[i], _ = value(sel, exp)
	}
	return out
}
