package measure

import (
	"strings"
	"testing"
	"time"
)

func TestClientSaturatedRule(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name        string
		cpu, wait   time.Duration
		spin        time.Duration
		elapsed     time.Duration
		cores, conc int
		want        bool
	}{
		{"pegged core", 990 * time.Millisecond, 0, 0, s, 1, 8, true},
		{"exactly 90 %", 1800 * time.Millisecond, 0, 0, s, 2, 8, true},
		{"half the cores", s, 0, 0, s, 2, 8, false},
		{"c = 1 pegs one core of two", 950 * time.Millisecond, 0, 0, s, 2, 1, true},
		{"c = 1 at half a core", 500 * time.Millisecond, 0, 0, s, 2, 1, false},
		{"crowded off its core while working", 600 * time.Millisecond, 350 * time.Millisecond, 0, s, 1, 4, true},
		{"a light client on a crowded machine", 400 * time.Millisecond, 550 * time.Millisecond, 0, s, 1, 4, false},
		{"too short to judge", 9 * time.Millisecond, 0, 0, 10 * time.Millisecond, 1, 8, false},
		{"just long enough", 248 * time.Millisecond, 0, 0, MinJudgedElapsed, 1, 8, true},
		{"c = 1 spinning, not working", 950 * time.Millisecond, 0, 600 * time.Millisecond, s, 2, 1, false},
		{"unknown cores", 5 * s, 0, 0, s, 0, 8, false},
		{"no time", s, 0, 0, 0, 2, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClientSaturated(tt.cpu, tt.wait, tt.spin, tt.elapsed, tt.cores, tt.conc); got != tt.want {
				t.Errorf("ClientSaturated(%v, %v, %v, %d cores, c %d) = %v, want %v", tt.cpu, tt.wait, tt.elapsed, tt.cores, tt.conc, got, tt.want)
			}
		})
	}
}

func TestMeasurementMergeClientUsage(t *testing.T) {
	a := &Measurement{ClientCPU: time.Second, ClientCPUWait: time.Millisecond, ClientCores: 2}
	a.Merge(&Measurement{ClientCPU: 2 * time.Second, ClientCPUWait: 2 * time.Millisecond, ClientCores: 4})
	if a.ClientCPU != 3*time.Second || a.ClientCPUWait != 3*time.Millisecond || a.ClientCores != 6 {
		t.Errorf("merged client usage = %v cpu, %v wait, %d cores; want 3s, 3ms, 6", a.ClientCPU, a.ClientCPUWait, a.ClientCores)
	}
}

func TestClientUnjudged(t *testing.T) {
	judged := Measurement{ClientCores: 2, Elapsed: time.Second, Complete: 10, ClientCPU: 2 * time.Second, Concurrency: 8}
	tests := []struct {
		name string
		edit func(*Measurement)
		want string // a substring; "" means judged
	}{
		{"judged", func(*Measurement) {}, ""},
		{"no cores known", func(m *Measurement) { m.ClientCores = 0 }, "does not report"},
		{"too short", func(m *Measurement) { m.Elapsed = 20 * time.Millisecond }, "the run took 20ms, under the 250ms"},
		{"only 500s", func(m *Measurement) { m.Non2xx = 10 }, "no request succeeded"},
		{"refused", func(m *Measurement) { m.Complete = 0; m.Failed = 10; m.Failures.Connect = 10 }, "no request succeeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := judged
			tt.edit(&m)
			got := m.ClientUnjudged()
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("ClientUnjudged() = %q, want %q", got, tt.want)
			}
			if got != "" && m.ClientSaturated() {
				t.Error("an unjudged run is marked saturated")
			}
			if got == "" && !m.ClientSaturated() {
				t.Error("a pegged client is not marked saturated")
			}
		})
	}
}
