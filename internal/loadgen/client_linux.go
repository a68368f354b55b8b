package loadgen

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// readCPU reads the whole process's user and system time with
// getrusage(RUSAGE_SELF): process-wide on purpose, since in the all-in-one
// service the API and the embedded Redis share the process and its cores
// with the load. Each thread's run-queue wait comes from
// /proc/self/task/*/schedstat; without /proc the waits stay zero.
func readCPU() cpuReading {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return cpuReading{}
	}
	return cpuReading{
		ok:    true,
		cpu:   time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		waits: threadWaits(),
	}
}

// threadWaits maps each live thread to its run-queue wait, the second field
// of its schedstat ("run ns, wait ns, timeslices").
func threadWaits() map[int]time.Duration {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	waits := make(map[int]time.Duration, len(tasks))
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited since the listing
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
			waits[tid] = time.Duration(ns)
		}
	}
	return waits
}

// clientCores is how many cores the process may run Go code on at once:
// GOMAXPROCS, capped by the scheduler affinity mask read now.
// runtime.NumCPU would give the mask only as it was at startup, and
// `taskset -p` or a container runtime can narrow it later.
func clientCores() int {
	n := runtime.GOMAXPROCS(0)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil && set.Count() > 0 {
		n = min(n, set.Count())
	}
	return n
}
