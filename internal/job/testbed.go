package job

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Testbed is what a run was measured on: the same target and load read
// differently on another CPU, with fewer cores, on another kernel or
// benchq, so a series of runs over history compares like with like only
// within one testbed. The worker fills it once per process and stores it
// with each run.
type Testbed struct {
	// CPUModel is the worker's CPU as /proc/cpuinfo names it.
	CPUModel string `json:"cpu_model,omitempty" example:"AMD EPYC 7B13"`
	// Cores is how many CPUs the worker process may run on (its
	// affinity), not how many the machine has.
	Cores int `json:"cores" example:"2"`
	// Kernel is the kernel release (uname -r).
	Kernel string `json:"kernel,omitempty" example:"6.8.0-45-generic"`
	// Version is the benchq build: module version and VCS revision.
	Version string `json:"version,omitempty" example:"v1.4.0"`
	// Pool is the worker pool label the operator gave the worker
	// (--worker-pool), empty when none.
	Pool string `json:"pool,omitempty" example:"bare-metal"`
}

// TestbedMixed is the testbed ID of a cell whose runs were measured on
// different testbeds; it matches no single testbed's ID.
const TestbedMixed = "mixed"

// ID is a short stable name of t: 12 hex digits of a hash of its fields,
// "" for the zero Testbed (runs stored before testbeds were recorded).
func (t Testbed) ID() string {
	if t == (Testbed{}) {
		return ""
	}
	h := sha256.Sum256([]byte(strings.Join([]string{t.CPUModel, strconv.Itoa(t.Cores), t.Kernel, t.Version, t.Pool}, "\x00")))
	return hex.EncodeToString(h[:6])
}

// TestbedID is the ID of the run's testbed, "" when it has none.
func (r *Run) TestbedID() string {
	if r.Testbed == nil {
		return ""
	}
	return r.Testbed.ID()
}
