package job

import (
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/google/go-cmp/cmp"
)

func TestValidateMonitor(t *testing.T) {
	tests := []struct {
		name string
		mon  monitor.Spec
		want map[string]string // field -> part of its message
	}{
		{"node exporter", monitor.Spec{Prometheus: "http://127.0.0.1:9100/metrics"}, nil},
		{"selectors", monitor.Spec{Prometheus: "http://127.0.0.1:9100/metrics", CPU: `node_cpu_seconds_total{cpu="0",mode!="idle"}`,
			Memory: "process_resident_memory_bytes", Series: []string{`nginx_connections_active`, `x{a=~"b|c"}`}, Cores: 1.5}, nil},
		{"no url", monitor.Spec{}, map[string]string{"targets[0].monitor.prometheus": "required"}},
		{"policy refuses", monitor.Spec{Prometheus: "http://10.0.0.1:9100/metrics"}, map[string]string{"targets[0].monitor.prometheus": "address policy"}},
		{"scheme", monitor.Spec{Prometheus: "file:///proc/stat"}, map[string]string{"targets[0].monitor.prometheus": "scheme"}},
		{"bad selectors", monitor.Spec{Prometheus: "http://127.0.0.1:9100/metrics", CPU: `x{mode!=idle}`, Memory: "9x",
			Series: []string{"ok", `y{a=~"("}`}},
			map[string]string{
				"targets[0].monitor.cpu":       "want a quoted value",
				"targets[0].monitor.memory":    "want a metric name",
				"targets[0].monitor.series[1]": "not a regular expression",
			}},
		{"too many series", monitor.Spec{Prometheus: "http://127.0.0.1:9100/metrics", Series: strings.Fields(strings.Repeat("up ", monitor.MaxSeries+1))},
			map[string]string{"targets[0].monitor.series": "at most 20"}},
		{"negative cores", monitor.Spec{Prometheus: "http://127.0.0.1:9100/metrics", Cores: -1}, map[string]string{"targets[0].monitor.cores": "number of cores"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			mon := tc.mon
			s.Targets[0].Monitor = &mon
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			got := map[string]string{}
			if ce, ok := errcode.As(err); ok {
				for _, f := range ce.Problems {
					got[f.Field] = f.Message
				}
			} else if err != nil {
				t.Fatalf("Validate: %v, want a *errcode.Error", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Validate problems = %v, want fields %v", got, tc.want)
			}
			for f, part := range tc.want {
				if !strings.Contains(got[f], part) {
					t.Errorf("problem of %s = %q, want it to contain %q", f, got[f], part)
				}
			}
		})
	}
}

func TestDecodeMonitorAndRedact(t *testing.T) {
	s, err := Decode(strings.NewReader(`{"targets": [{"name": "a", "url": "http://127.0.0.1:8081/",
		"monitor": {"prometheus": "http://u:secret@127.0.0.1:9100/metrics", "cpu": "node_cpu_seconds_total{mode!=\"idle\"}", "cores": 2}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &monitor.Spec{Prometheus: "http://u:secret@127.0.0.1:9100/metrics", CPU: `node_cpu_seconds_total{mode!="idle"}`, Cores: 2}
	if d := cmp.Diff(want, s.Targets[0].Monitor); d != "" {
		t.Fatalf("decoded monitor (-want +got):\n%s", d)
	}
	if r := s.Redacted().Targets[0].Monitor.Prometheus; strings.Contains(r, "secret") {
		t.Fatalf("redacted monitor URL %q keeps the password", r)
	}
	if s.Targets[0].Monitor.Prometheus != want.Prometheus {
		t.Fatal("Redacted changed the spec it copied")
	}
	if _, err := Decode(strings.NewReader(`{"targets": [{"name": "a", "url": "http://127.0.0.1:8081/", "monitor": {"prometheus": "x", "cpus": 2}}]}`)); err == nil ||
		!strings.Contains(err.Error(), "cpus") {
		t.Fatalf("Decode(unknown monitor field) = %v, want it named", err)
	}
}

func TestValidateSettle(t *testing.T) {
	mon := &monitor.Spec{Prometheus: "http://127.0.0.1:9100/metrics"}
	tests := []struct {
		name    string
		monitor *monitor.Spec
		settle  Duration
		below   float64
		want    map[string]string
	}{
		{"monitored", mon, Duration(60e9), 0.2, nil},
		{"no settle, no monitor", nil, 0, 0, nil},
		{"no monitor", nil, Duration(60e9), 0, map[string]string{"sweep.settle": "no target has a monitor"}},
		{"negative", mon, Duration(-1e9), 0, map[string]string{"sweep.settle": "outside"}},
		{"share above 1", mon, Duration(60e9), 1.5, map[string]string{"sweep.settle_below": "between 0 and 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			s.Targets[0].Monitor = tc.monitor
			s.Sweep.Settle, s.Sweep.SettleBelow = tc.settle, tc.below
			got := map[string]string{}
			if ce, ok := errcode.As(s.Validate(DefaultLimits(), testservers.LoopbackOnly)); ok {
				for _, f := range ce.Problems {
					got[f.Field] = f.Message
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Validate problems = %v, want fields %v", got, tc.want)
			}
			for f, part := range tc.want {
				if !strings.Contains(got[f], part) {
					t.Errorf("problem of %s = %q, want it to contain %q", f, got[f], part)
				}
			}
		})
	}
}
