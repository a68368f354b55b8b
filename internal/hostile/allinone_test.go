package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/proctest"
)

var (
	childLine     = regexp.MustCompile(`redis-server child keeps .* pid=(\d+)`)
	restartedLine = regexp.MustCompile(`redis-server child restarted.* pid=(\d+)`)
)

// allInOneEnv is this test's environment without BENCHQ_* (a developer's
// BENCHQ_REDIS_URL must not leak in), with the XDG data home in a temp
// dir and the data directory given.
func allInOneEnv(t *testing.T, dataDir string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BENCHQ_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_DATA_HOME="+t.TempDir(), "BENCHQ_SHUTDOWN_TIMEOUT=10s", "BENCHQ_DATA_DIR="+dataDir)
}

// TestAllInOneRestartsItsRedis: kill -9 of the all-in-one's redis-server
// child costs a moment, not the service. The child is started again on
// the same data directory (the restart logged with its new pid), the
// API answers nothing but 503 meanwhile, and within a few seconds it
// serves again, with the job submitted before the kill.
func TestAllInOneRestartsItsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the all-in-one and its redis-server; skipped with -short")
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(target.Close)
	bin := proctest.Build(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	p := proctest.Start(t, bin, allInOneEnv(t, dataDir), "--addr", "127.0.0.1:0")
	pid, _ := strconv.Atoi(p.WaitLine(t, childLine, 30*time.Second)[1])
	base := "http://" + p.WaitAddr(t)

	spec := fmt.Sprintf(`{"name":"before the kill","targets":[{"url":%q}],"sweep":{"concurrency":[1],"requests":[5]}}`, target.URL+"/")
	resp, body := proctest.Call(t, http.MethodPost, base+"/v1/jobs", []byte(spec))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs = %d %s, want 202", resp.StatusCode, body)
	}
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); err != nil || created.ID == "" {
		t.Fatalf("POST /v1/jobs answer %s: %v", body, err)
	}

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	client := &http.Client{Timeout: 5 * time.Second}
	var back time.Duration
	unavailable := 0
	for back == 0 {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("GET /v1/jobs/%s still not 200 10 s after the child was killed (%d answers of 503)", created.ID, unavailable)
		}
		resp, err := client.Get(base + "/v1/jobs/" + created.ID)
		if err != nil {
			t.Fatalf("GET /v1/jobs/%s %s after the kill: %v (the API must stay up)", created.ID, time.Since(killed), err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			back = time.Since(killed)
		case http.StatusServiceUnavailable:
			unavailable++
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatalf("GET /v1/jobs/%s after the kill = %d, want 503 while Redis is down, then 200", created.ID, resp.StatusCode)
		}
	}
	t.Logf("the job was served again %s after the kill (%d answers of 503 before)", back.Round(time.Millisecond), unavailable)
	if back > 5*time.Second {
		t.Errorf("served again %s after the kill, want within 5 s", back)
	}
	newPid, _ := strconv.Atoi(p.WaitLine(t, restartedLine, 10*time.Second)[1])
	if newPid == pid || syscall.Kill(newPid, 0) != nil {
		t.Errorf("logged restarted child pid %d (killed %d) is not a new, running process", newPid, pid)
	}
	if resp, body := proctest.Call(t, http.MethodPost, base+"/v1/jobs", []byte(spec)); resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST /v1/jobs after the restart = %d %s, want 202", resp.StatusCode, body)
	}
	if resp, body := proctest.Call(t, http.MethodGet, base+"/readyz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz after the restart = %d %s, want 200", resp.StatusCode, body)
	}
	p.Stop(t)
}
