package job

import (
	"slices"
	"strings"
)

// ComparisonPair asks for one target's every point to be compared with
// another target's point of the same concurrency and requests/duration/
// rate: "XCache raises Apache by 250-350 %" is {"target":
// "apache-xcache", "baseline": "apache"}.
type ComparisonPair struct {
	Target   string `json:"target"`
	Baseline string `json:"baseline"`
}

// maxComparisonPairs bounds a spec's comparisons: a job of 64 targets
// compared each with one baseline needs 63.
const maxComparisonPairs = 64

// ComparisonPairs lists every comparison the job makes, the baseline
// shorthand's first (each other target against Baseline, in target
// order), then Comparisons' in their order; a pair given twice is made
// once.
func (s Spec) ComparisonPairs() []ComparisonPair {
	var pairs []ComparisonPair
	add := func(p ComparisonPair) {
		if p.Target != p.Baseline && !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	if s.Baseline != "" {
		for _, t := range s.Targets {
			add(ComparisonPair{Target: t.Name, Baseline: s.Baseline})
		}
	}
	for _, p := range s.Comparisons {
		add(p)
	}
	return pairs
}

func (v *validator) comparisons(s Spec) {
	if len(s.Comparisons) > maxComparisonPairs {
		v.add("comparisons", "%d pairs; at most %d are allowed", len(s.Comparisons), maxComparisonPairs)
		return
	}
	names := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		names[i] = t.Name
	}
	for i, p := range s.Comparisons {
		field := index("comparisons", i)
		for _, side := range []struct{ name, value string }{{"target", p.Target}, {"baseline", p.Baseline}} {
			if !slices.Contains(names, side.value) {
				v.add(field+"."+side.name, "%q names no target (targets: %s)", side.value, strings.Join(names, ", "))
			}
		}
		if p.Target == p.Baseline && p.Target != "" {
			v.add(field, "compares %q with itself", p.Target)
		}
	}
}
