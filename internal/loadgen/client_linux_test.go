package loadgen

import (
	"github.com/benchq/benchq/internal/measure"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// oneCoreEnv marks the child process TestClientSaturatedOnOneCore re-runs
// itself in.
const oneCoreEnv = "BENCHQ_LOADGEN_ONE_CORE"

// TestClientSaturatedOnOneCore pins the test binary to one core with
// taskset, in a child process so that every thread, the runtime's
// included, inherits the mask (setting it from Go would reach only the
// calling thread), and runs a fast in-process server against eight
// keep-alive workers there: server and client share the one core, so the
// client is the limit and the run must say so.
func TestClientSaturatedOnOneCore(t *testing.T) {
	if os.Getenv(oneCoreEnv) == "" {
		runOnOneCore(t, "TestClientSaturatedOnOneCore")
		return
	}
	if got := clientCores(); got != 1 {
		t.Fatalf("clientCores() = %d under taskset with GOMAXPROCS=1, want 1", got)
	}
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBody([]byte("ok")) }, nil)
	// The mark needs the client to have used half its core itself; other
	// test binaries on the same core can crowd one run below that (it
	// then waits instead of working, which alone must not raise the
	// mark), so a few runs are tried and one must be marked.
	for try := 1; ; try++ {
		m := run(t, measure.Plan{URLs: []string{ts.URL + "/"}, Requests: 10000, Concurrency: 8, KeepAlive: true})
		checkEq(t, "Complete", m.Complete, 10000)
		checkEq(t, "ClientCores", m.ClientCores, 1)
		t.Logf("try %d: elapsed %v, cpu %v, wait %v", try, m.Elapsed, m.ClientCPU, m.ClientCPUWait)
		if m.ClientSaturated() {
			return
		}
		if try == 4 {
			t.Fatalf("not saturated in %d runs: last %v CPU + %v wait over %v on one core, want ≥ 90 %% with half a core used", try, m.ClientCPU, m.ClientCPUWait, m.Elapsed)
		}
	}
}

// runOnOneCore re-runs test in a child pinned to the first core this
// process may use, with GOMAXPROCS=1, and fails t if the child fails.
func runOnOneCore(t *testing.T, test string) {
	t.Helper()
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("taskset not on PATH under CI: %v", err)
		}
		t.Skipf("needs taskset (util-linux): %v", err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatalf("sched_getaffinity: %v", err)
	}
	cpu := 0
	for !set.IsSet(cpu) {
		cpu++
	}
	cmd := exec.Command(taskset, "-c", strconv.Itoa(cpu), os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), oneCoreEnv+"=1", "GOMAXPROCS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child on cpu %d:\n%s", cpu, out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
}

// TestClientIdleNotSaturated runs one worker against a server that sleeps
// 20 ms per request: the client waits nearly all the time, so it must use
// some CPU (the accounting works) but far from the capacity of its core.
// The time its threads waited for a CPU is the machine's, not the run's
// (other test binaries crowd it under CI: 25-44 ms of 430 with four busy
// loops beside it here), so the verdict is checked on the CPU it used.
func TestClientIdleNotSaturated(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(20 * time.Millisecond)
		ctx.SetBody([]byte("ok"))
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL + "/"}, Requests: 20, Concurrency: 1, KeepAlive: true})
	t.Logf("elapsed %v, cpu %v, wait %v, cores %d", m.Elapsed, m.ClientCPU, m.ClientCPUWait, m.ClientCores)
	checkEq(t, "Complete", m.Complete, 20)
	if m.ClientCores < 1 {
		t.Errorf("ClientCores = %d, want ≥ 1", m.ClientCores)
	}
	if measure.ClientSaturated(m.ClientCPU, 0, m.ClientSpin, m.Elapsed, m.ClientCores, m.Concurrency) {
		t.Errorf("saturated: %v CPU over %v with c = 1 against a sleeping server", m.ClientCPU, m.Elapsed)
	}
	if m.ClientCPU <= 0 || m.ClientCPU > m.Elapsed/4 {
		t.Errorf("ClientCPU %v over %v: want some CPU, and well under one core", m.ClientCPU, m.Elapsed)
	}
}
