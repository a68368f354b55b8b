package job

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Threshold is one parsed entry of spec.thresholds: "p95_ms < 200", or
// scoped to a target, "lighttpd: p99_ms < 50". Evaluating it against the
// results is issue 4's; parsing now lets submission refuse unknown metrics
// instead of passing them silently later.
type Threshold struct {
	Target string  `json:"target,omitempty"` // empty: every target
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"`
}

// String formats t as it is written in a spec.
func (t Threshold) String() string {
	s := fmt.Sprintf("%s %s %s", t.Metric, t.Op, strconv.FormatFloat(t.Value, 'g', -1, 64))
	if t.Target != "" {
		return t.Target + ": " + s
	}
	return s
}

// Metrics lists the metric names a threshold may use, each a field of a
// run's ab-compatible result or derived from it.
func Metrics() []string {
	return []string{
		"rps", "time_per_request_ms", "time_per_request_all_ms", "transfer_rate_kbps",
		"mean_ms", "min_ms", "max_ms",
		"p50_ms", "p66_ms", "p75_ms", "p80_ms", "p90_ms", "p95_ms", "p98_ms", "p99_ms", "p100_ms",
		"complete", "failed", "failed_ratio", "non_2xx", "non_2xx_ratio",
	}
}

var errNoOperator = errors.New("want \"metric op number\" with op one of <, <=, >, >=, ==, !=")

// ParseThreshold parses "[target:] metric op number".
func ParseThreshold(s string) (Threshold, error) {
	t, err := parseThreshold(s)
	if err != nil {
		return Threshold{}, fmt.Errorf("%w: threshold %q: %w", ErrInvalid, s, err)
	}
	return t, nil
}

// ParsedThresholds parses every entry of s.Thresholds.
func (s Spec) ParsedThresholds() ([]Threshold, error) {
	out := make([]Threshold, 0, len(s.Thresholds))
	for _, raw := range s.Thresholds {
		t, err := ParseThreshold(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func parseThreshold(s string) (Threshold, error) {
	var t Threshold
	expr := s
	if target, rest, ok := strings.Cut(s, ":"); ok {
		t.Target, expr = strings.TrimSpace(target), rest
		if t.Target == "" {
			return Threshold{}, errors.New("empty target before ':'")
		}
	}
	at := strings.IndexAny(expr, "<>=!")
	if at < 0 {
		return Threshold{}, errNoOperator
	}
	t.Metric = strings.TrimSpace(expr[:at])
	t.Op = expr[at : at+1]
	if at+1 < len(expr) && expr[at+1] == '=' {
		t.Op = expr[at : at+2]
	}
	if t.Op == "=" || t.Op == "!" {
		return Threshold{}, errNoOperator
	}
	if !knownMetric(t.Metric) {
		return Threshold{}, fmt.Errorf("unknown metric %q: want one of %s", t.Metric, strings.Join(Metrics(), ", "))
	}
	num := strings.TrimSpace(expr[at+len(t.Op):])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Threshold{}, fmt.Errorf("%q is not a finite number", num)
	}
	t.Value = v
	return t, nil
}

func knownMetric(name string) bool {
	for _, m := range Metrics() {
		if m == name {
			return true
		}
	}
	return false
}
