package measure

import (
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
		{"crowded off its core", 400 * time.Millisecond, 550 * time.Millisecond, 0, s, 1, 4, true},
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
