package worker

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/benchq/benchq/internal/job"
)

// Where the testbed is read from (Linux; elsewhere they are missing and
// their fields stay empty).
const (
	cpuinfoPath   = "/proc/cpuinfo"
	osreleasePath = "/proc/sys/kernel/osrelease"
)

// probeTestbed describes the machine this worker process measures on, once
// per process: every run it stores carries it, so a template's history is
// compared within one testbed (analysis.SplitSeries). pool is the
// operator's label for the worker pool.
func probeTestbed(pool string) job.Testbed {
	return job.Testbed{
		CPUModel: cpuModel(readSmall(cpuinfoPath)),
		// runtime.NumCPU is the CPUs in the process's affinity mask at
		// start: a worker pinned to two cores of a large machine is a
		// two-core testbed.
		Cores:   runtime.NumCPU(),
		Kernel:  strings.TrimSpace(string(readSmall(osreleasePath))),
		Version: buildVersion(debug.ReadBuildInfo()),
		Pool:    pool,
	}
}

// readSmall reads a /proc file; nil when it cannot.
func readSmall(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// cpuModel is the first "model name" of /proc/cpuinfo (x86), else its
// "Hardware", "cpu model" or "CPU part" line (ARM, MIPS), else "".
func cpuModel(cpuinfo []byte) string {
	found := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if _, seen := found[k]; !seen {
			found[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	for _, k := range []string{"model name", "Hardware", "cpu model", "CPU part"} {
		if v := found[k]; v != "" {
			return v
		}
	}
	return ""
}

// buildVersion is the module version and, when stamped, the short VCS
// revision ("(devel)+3f9c2e1a0b7d"), as `benchq version` reads them.
func buildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return ""
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			v += "+" + s.Value[:min(len(s.Value), 12)]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "-dirty"
		}
	}
	return v
}
