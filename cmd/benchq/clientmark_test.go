package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/testservers"
)

// clientMarkRun is what these tests read of `benchq ab --json`.
type clientMarkRun struct {
	TimeTakenS      float64 `json:"time_taken_s"`
	Complete        int64   `json:"complete_requests"`
	ClientCPUS      float64 `json:"client_cpu_s"`
	ClientSpinS     float64 `json:"client_spin_s"`
	ClientCPUWaitS  float64 `json:"client_cpu_wait_s"`
	ClientSaturated bool    `json:"client_saturated"`
	ClientUnjudged  string  `json:"client_unjudged"`
}

// usedCores is the CPU the client spent working, in cores over the run.
func (r clientMarkRun) usedCores() float64 {
	return (r.ClientCPUS - r.ClientSpinS) / r.TimeTakenS
}

// pinnedNginx runs nginx on the machine's second core, the load
// generator getting the first, as a careful benchmark does.
func pinnedNginx(t *testing.T, files testservers.Files) string {
	t.Helper()
	if runtime.NumCPU() < 2 {
		t.Skip("needs two cores: one for the target, one for the client")
	}
	taskset := testservers.Require(t, "taskset", "util-linux")
	srv := testservers.Nginx(t, files)
	pid, err := os.ReadFile(filepath.Join(srv.Dir, "nginx.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(taskset, "-a", "-cp", "1", strings.TrimSpace(string(pid))).CombinedOutput(); err != nil {
		t.Fatalf("taskset nginx: %v %s", err, out)
	}
	return srv.URL
}

// pinnedAB runs `benchq ab --json args` on the first core.
func pinnedAB(t *testing.T, bin string, env []string, args ...string) clientMarkRun {
	t.Helper()
	return runAB(t, exec.Command("taskset", append([]string{"-c", "0", bin, "ab", "--json"}, args...)...), false, env, args)
}

// favouredAB runs `benchq ab --json args` on the first core, favoured
// there (testservers.FavouredCommand) so that the machine's other work
// does not take the core it is meant to saturate.
func favouredAB(t *testing.T, bin string, env []string, args ...string) clientMarkRun {
	t.Helper()
	return runAB(t, testservers.FavouredCommand(t, "0", append([]string{bin, "ab", "--json"}, args...)...), true, env, args)
}

// runAB runs cmd, a `benchq ab --json args`, with env added to the
// test's, and reads what it printed.
func runAB(t *testing.T, cmd *exec.Cmd, favoured bool, env, args []string) clientMarkRun {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("benchq ab %v: %v", args, err)
	}
	if favoured {
		testservers.FavourStarted(cmd.Process.Pid)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("benchq ab %v: %v\n%s", args, err, stderr.Bytes())
	}
	out := stdout.Bytes()
	var r clientMarkRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("benchq ab %v printed %s: %v", args, out, err)
	}
	t.Logf("ab %v: %d requests in %.3f s, client %.2f cores used (+%.3f s waiting), saturated %v %s",
		args, r.Complete, r.TimeTakenS, r.usedCores(), r.ClientCPUWaitS, r.ClientSaturated, r.ClientUnjudged)
	return r
}

// TestClientMarkFalsePositives runs `benchq ab` on its own core against
// nginx on the other at loads that leave the client light: the open model
// at a few hundred to a few thousand req/s, and one connection. No run
// whose client used under half a core may carry the mark, and the light
// runs must have been light for that to say anything.
func TestClientMarkFalsePositives(t *testing.T) {
	url := pinnedNginx(t, testservers.Files{"index.html": bytes.Repeat([]byte("x"), 1024)}) + "/index.html"
	bin := buildBenchq(t)
	light := 0
	for _, args := range [][]string{
		{"--rate", "300", "-t", "1", "-n", "1000000", "-c", "8", url},
		{"--rate", "3000", "-t", "1", "-n", "1000000", "-c", "8", "-k", url},
		{"-c", "1", "-k", "-t", "1", "-n", "1000000", url},
		{"-c", "1", "-t", "1", "-n", "1000000", url},
	} {
		r := pinnedAB(t, bin, nil, args...)
		if r.usedCores() < 0.5 {
			light++
			if r.ClientSaturated {
				t.Errorf("ab %v: marked client-bound with %.2f cores used", args, r.usedCores())
			}
		}
	}
	if light < 2 {
		t.Errorf("%d of the light loads left the client under half a core, want at least the two open-model ones", light)
	}
}

// TestClientMarkTruePositive pins `benchq ab` to one core with 32
// connections, a new one per request, against nginx on the other core:
// connecting and closing cost the client more than nginx's answer of a
// small file costs the server (measured here: the client 1.95 of 2
// CPU-seconds at 20 000 req/s, nginx idle part of the time), so the
// client is the limit and the run must say so. Both are favoured on
// their cores: on a machine busy with other work an unfavoured client
// gets a tenth of its core and waits rather than works, which alone must
// not raise the mark, and an unfavoured nginx keeps the client waiting
// on the network. Three runs are tried all the same.
func TestClientMarkTruePositive(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two cores: one for the target, one for the client")
	}
	bin := buildBenchq(t)
	url := testservers.FavouredNginx(t, testservers.Files{"index.html": bytes.Repeat([]byte("x"), 1024)}, "1").URL + "/index.html"
	for try := 1; try <= 3; try++ {
		r := favouredAB(t, bin, []string{"GOMAXPROCS=1"}, "-c", "32", "-t", "1", "-n", "1000000", url)
		if r.ClientSaturated {
			return
		}
		if try == 3 {
			t.Fatalf("not marked client-bound in %d runs: last used %.2f cores + %.3f s waiting of %.3f s", try, r.usedCores(), r.ClientCPUWaitS, r.TimeTakenS)
		}
	}
}
