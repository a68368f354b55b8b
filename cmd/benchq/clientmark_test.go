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
	cmd := exec.Command("taskset", append([]string{"-c", "0", bin, "ab", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("benchq ab %v: %v\n%s", args, err, stderr.Bytes())
	}
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
