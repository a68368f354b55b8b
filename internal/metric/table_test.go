package metric

import (
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/abreport"
)

// Every entry says what a person choosing a metric needs, and each name
// is there once.
func TestTableEntriesComplete(t *testing.T) {
	units := []string{"req/s", "ms", "KB/s", "requests", "ratio"}
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Name] {
			t.Errorf("metric %q listed twice", m.Name)
		}
		seen[m.Name] = true
		if !slices.Contains(units, m.Unit) {
			t.Errorf("metric %q unit %q, want one of %v", m.Name, m.Unit, units)
		}
		if m.Better != LowerIsBetter && m.Better != HigherIsBetter {
			t.Errorf("metric %q direction %q, want lower or higher", m.Name, m.Better)
		}
		if m.Description == "" || m.Read == nil {
			t.Errorf("metric %q has no description or no reader", m.Name)
		}
	}
	for _, pc := range abreport.TailPercents() {
		if !seen["p"+pc+"_ms"] {
			t.Errorf("tail percentile %s has no metric", pc)
		}
	}
}

// The trend page offers the same metrics, in the same order, as before
// the table held them.
func TestTrendOffered(t *testing.T) {
	want := []string{"rps", "p50_ms", "p90_ms", "p99_ms", "p99.9_ms", "mean_ms", "failed_ratio"}
	if got := TrendOffered(); !slices.Equal(got, want) {
		t.Errorf("TrendOffered() = %v, want %v", got, want)
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"rps", "rps", true},
		{"p99", "p99_ms", true},
		{"mean", "mean_ms", true},
		{"p99.9", "p99.9_ms", true},
		{"p99_ms", "p99_ms", true},
		{"p42", "", false},
		{"latency", "", false},
	}
	for _, tt := range tests {
		if got, ok := Canonical(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadUnknownMetric(t *testing.T) {
	if v, ok := Read(&abreport.Report{CompleteRequests: 1}, "latency"); ok {
		t.Errorf("Read(latency) = %v, true; want false", v)
	}
}
