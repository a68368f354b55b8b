package job

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/metric"
)

// Threshold is one parsed entry of spec.thresholds: "p95_ms < 200", or
// scoped to a target, "lighttpd: p99_ms < 50", or relative to the job that
// compare_to names, "rps >= 0.95 * baseline.rps", "p99_ms <= baseline.p99_ms + 5".
// Parsing at submission lets the API refuse unknown metrics instead of
// passing them silently later.
type Threshold struct {
	Target string  `json:"target,omitempty"` // empty: every target
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"` // the bound when Baseline is empty

	// Baseline, when set, names the metric of the compare_to job's
	// matching cell; the bound is then Factor × its mean + Offset.
	Baseline string  `json:"baseline,omitempty"`
	Factor   float64 `json:"factor,omitempty"`
	Offset   float64 `json:"offset,omitempty"`
}

// baselineRef starts the right-hand side's reference to the compare_to job.
const baselineRef = "baseline."

// String formats t as it is written in a spec.
func (t Threshold) String() string {
	s := fmt.Sprintf("%s %s %s", t.Metric, t.Op, t.boundText())
	if t.Target != "" {
		return t.Target + ": " + s
	}
	return s
}

func (t Threshold) boundText() string {
	if t.Baseline == "" {
		return formatNumber(t.Value)
	}
	s := baselineRef + t.Baseline
	if t.Factor != 1 {
		s = formatNumber(t.Factor) + " * " + s
	}
	switch {
	case t.Offset > 0:
		s += " + " + formatNumber(t.Offset)
	case t.Offset < 0:
		s += " - " + formatNumber(-t.Offset)
	}
	return s
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// RefersToBaseline reports whether t compares against the compare_to job.
func (t Threshold) RefersToBaseline() bool { return t.Baseline != "" }

var (
	errNoOperator = errors.New("want \"metric op number\" with op one of <, <=, >, >=, ==, !=")
	errBadBound   = errors.New("want a number, or [factor *] baseline.<metric> [+ or - number] (e.g. 0.95 * baseline.rps)")
)

// ParseThreshold parses "[target:] metric op bound", where bound is a
// number or "[factor *] baseline.<metric> [+ or - number]".
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
	for _, e := range s.Thresholds {
		t, err := ParseThreshold(e.Threshold)
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
	if !metric.Known(t.Metric) {
		return Threshold{}, fmt.Errorf("unknown metric %q: want one of %s", t.Metric, strings.Join(metric.Names(), ", "))
	}
	rhs := strings.TrimSpace(expr[at+len(t.Op):])
	if !strings.Contains(rhs, baselineRef) {
		v, err := parseFinite(rhs)
		if err != nil {
			return Threshold{}, err
		}
		t.Value = v
		return t, nil
	}
	if err := t.parseRelative(rhs); err != nil {
		return Threshold{}, err
	}
	return t, nil
}

// parseRelative reads "[factor *] baseline.metric [* factor] [+|- offset]".
func (t *Threshold) parseRelative(rhs string) error {
	toks := boundTokens(rhs)
	t.Factor = 1
	factored := false
	num := func(i int) (float64, error) {
		if i >= len(toks) {
			return 0, errBadBound
		}
		return parseFinite(toks[i])
	}
	i := 0
	if len(toks) > 1 && toks[1] == "*" && !strings.HasPrefix(toks[0], baselineRef) {
		f, err := num(0)
		if err != nil {
			return err
		}
		t.Factor, factored, i = f, true, 2
	}
	if i >= len(toks) || !strings.HasPrefix(toks[i], baselineRef) {
		return errBadBound
	}
	t.Baseline = strings.TrimPrefix(toks[i], baselineRef)
	if !metric.Known(t.Baseline) {
		return fmt.Errorf("unknown metric %q after %q: want one of %s", t.Baseline, baselineRef, strings.Join(metric.Names(), ", "))
	}
	i++
	if i < len(toks) && toks[i] == "*" && !factored {
		f, err := num(i + 1)
		if err != nil {
			return err
		}
		t.Factor, i = f, i+2
	}
	if i < len(toks) && (toks[i] == "+" || toks[i] == "-") {
		o, err := num(i + 1)
		if err != nil {
			return err
		}
		if toks[i] == "-" {
			o = -o
		}
		t.Offset, i = o, i+2
	}
	if i != len(toks) {
		return errBadBound
	}
	if t.Factor <= 0 {
		return fmt.Errorf("factor %s: want a positive number", formatNumber(t.Factor))
	}
	return nil
}

// boundTokens splits a bound into numbers, names and the operators * + -.
// A sign inside a number's exponent ("1e-3") stays part of the number.
func boundTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '*' || c == '+' || c == '-':
			toks = append(toks, s[i:i+1])
			i++
			continue
		}
		j := i
		for ; j < len(s); j++ {
			if s[j] == ' ' || s[j] == '\t' || s[j] == '*' {
				break
			}
			exponent := j > i && (s[j-1] == 'e' || s[j-1] == 'E') && c >= '0' && c <= '9'
			if (s[j] == '+' || s[j] == '-') && !exponent {
				break
			}
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks
}

func parseFinite(num string) (float64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", num)
	}
	return v, nil
}
