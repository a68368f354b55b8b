package monitor

import (
	"fmt"
	"math"
)

// Spec limits.
const (
	// MaxSeries bounds the extra series a target may record: each is a
	// number per interval in every stored run.
	MaxSeries = 20
	// MaxCores bounds Spec.Cores: a share of more cores than any machine
	// has is a typo.
	MaxCores = 4096
)

// Spec is where a target's metrics are and what in them counts as the
// server's CPU and memory. Only Prometheus is required; the rest default
// to the series the endpoint exposes (see Defaults).
type Spec struct {
	// Prometheus is the URL of a Prometheus text-format endpoint:
	// node_exporter, process-exporter, an nginx or apache exporter, or the
	// application's own /metrics. The address policy applies as to a
	// target.
	Prometheus string `json:"prometheus" example:"http://127.0.0.1:9100/metrics"`
	// CPU selects the counters of the server's CPU seconds, summed. By
	// default the first exposed of process-exporter's
	// namedprocess_namegroup_cpu_seconds_total, node_exporter's
	// node_cpu_seconds_total{mode!="idle"} and the application's own
	// process_cpu_seconds_total (an exporter exposes its own process's
	// too, so it comes last).
	CPU string `json:"cpu,omitempty" example:"node_cpu_seconds_total{cpu=\"0\",mode!=\"idle\"}"`
	// Memory selects the server's memory in bytes, summed. By default,
	// in the same order: process-exporter's
	// namedprocess_namegroup_memory_bytes{memtype="resident"},
	// node_exporter's MemTotal minus MemAvailable (used), the process's
	// process_resident_memory_bytes.
	Memory string `json:"memory,omitempty" example:"process_resident_memory_bytes"`
	// Series are extra selectors recorded per interval: a counter's
	// increase, a gauge's value at the interval's end.
	Series []string `json:"series,omitempty" maxItems:"20" example:"nginx_connections_active"`
	// Cores is how many cores the server has, for the share of them it
	// kept busy; default: the number of cpu labels of
	// node_cpu_seconds_total, else, beside process_cpu_seconds_total, a
	// Go server's go_sched_gomaxprocs_threads, else unknown.
	Cores float64 `json:"cores,omitempty" minimum:"0" example:"1"`
}

// Problem is one thing wrong with a Spec: Field is the path below the
// monitor object ("cpu", "series[2]").
type Problem struct {
	Field   string
	Message string
}

// Problems checks the selectors and numbers of s; the URL is the caller's
// to check, with the address policy it checks targets with.
func (s Spec) Problems() []Problem {
	var out []Problem
	sel := func(field, v string) {
		if _, err := ParseSelector(v); err != nil {
			out = append(out, Problem{field, selectorMessage(v, err)})
		}
	}
	if s.CPU != "" {
		sel("cpu", s.CPU)
	}
	if s.Memory != "" {
		sel("memory", s.Memory)
	}
	if len(s.Series) > MaxSeries {
		out = append(out, Problem{"series", fmt.Sprintf("%d series: at most %d", len(s.Series), MaxSeries)})
	}
	for i, v := range s.Series {
		sel(fmt.Sprintf("series[%d]", i), v)
	}
	if s.Cores < 0 || s.Cores > MaxCores || math.IsNaN(s.Cores) {
		out = append(out, Problem{"cores", fmt.Sprintf("%v is not a number of cores between 0 and %d", s.Cores, MaxCores)})
	}
	return out
}

func selectorMessage(v string, err error) string {
	const show = 80
	if len(v) > show {
		v = v[:show] + "…"
	}
	return fmt.Sprintf("%q is not a selector (a metric name with optional {label=\"value\"} matchers, = != =~ !~): %s",
		v, trimSentinel(err))
}

// trimSentinel drops the package prefix the sentinel adds, for a
// message a client reads.
func trimSentinel(err error) string {
	msg := err.Error()
	prefix := ErrBadSelector.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}
