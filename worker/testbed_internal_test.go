package worker

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestCPUModel(t *testing.T) {
	tests := []struct{ name, cpuinfo, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13  64-Core Processor\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13  64-Core Processor\n", "AMD EPYC 7B13 64-Core Processor"},
		{"arm", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n", "0xd0c"},
		{"none", "", ""},
	}
	for _, tt := range tests {
		if got := cpuModel([]byte(tt.cpuinfo)); got != tt.want {
			t.Errorf("%s: cpuModel = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestBuildVersion(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3f9c2e1a0b7d55aa"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := buildVersion(info, true), "v1.2.3+3f9c2e1a0b7d-dirty"; got != want {
		t.Errorf("buildVersion = %q, want %q", got, want)
	}
	if got := buildVersion(nil, false); got != "" {
		t.Errorf("buildVersion without build info = %q, want empty", got)
	}
}

// TestProbeTestbed: the worker's own testbed names its cores and pool,
// and on Linux its CPU and kernel.
func TestProbeTestbed(t *testing.T) {
	tb := probeTestbed("pool-a")
	if tb.Cores != runtime.NumCPU() || tb.Pool != "pool-a" || tb.ID() == "" {
		t.Errorf("probeTestbed = %+v, want %d cores, pool pool-a, an id", tb, runtime.NumCPU())
	}
	if runtime.GOOS == "linux" && (tb.Kernel == "" || tb.CPUModel == "") {
		t.Errorf("probeTestbed on Linux = %+v, want the kernel release and CPU model", tb)
	}
	if other := probeTestbed("pool-b"); other.ID() == tb.ID() {
		t.Errorf("testbeds of two pools share id %s", tb.ID())
	}
}
