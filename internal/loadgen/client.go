package loadgen

import "time"

// cpuReading is the process's CPU accounting at one instant: CPU time used
// by every thread so far (live and exited) and, per live thread, the time
// it has spent ready to run but waiting for a CPU. ok is false where the
// system does not tell (the readings then stay zero).
type cpuReading struct {
	ok    bool
	cpu   time.Duration
	waits map[int]time.Duration // by thread id
}

// clientUsage is what the process spent between two readings.
type clientUsage struct {
	cpu, wait time.Duration
	cores     int
}

// usageSince returns the usage from start to now. Waits are summed per
// thread, so a thread born in between counts from zero and one that exited
// drops out (Go parks threads rather than ending them, so that is rare).
func usageSince(start cpuReading) clientUsage {
	end := readCPU()
	if !start.ok || !end.ok {
		return clientUsage{}
	}
	u := clientUsage{cpu: max(0, end.cpu-start.cpu), cores: clientCores()}
	for tid, w := range end.waits {
		u.wait += max(0, w-start.waits[tid])
	}
	return u
}
