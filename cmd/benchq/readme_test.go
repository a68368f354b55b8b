package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
)

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestReadmeExamples runs README.md's ```sh blocks verbatim, in order, in
// one sh (they share $JOB), against the all-in-one service started
// in-process, on a temporary data directory (its redis-server child where
// one is installed). Only the address changes: the service's random port
// replaces 127.0.0.1:8080, so the test never collides with a benchq
// already running.
func TestReadmeExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("curl not on PATH under CI: %v", err)
		}
		t.Skip("curl not installed (apt-get install -y curl); skipping the README examples")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 4 {
		t.Fatalf("README.md has %d sh blocks, want the 4 curl examples", len(blocks))
	}
	m := startMain(t, func(c *config.Config) { c.DataDir = t.TempDir() })
	if _, err := exec.LookPath("redis-server"); err == nil && m.redis.child == nil {
		t.Error("redis-server is installed, but the README's all-in-one did not start it")
	}
	var script strings.Builder
	script.WriteString("set -eu\n")
	for i, b := range blocks {
		if !strings.Contains(b[1], "curl") {
			t.Fatalf("README sh block %d runs no curl:\n%s", i+1, b[1])
		}
		fmt.Fprintf(&script, "%s\necho '@@block %d ok'\n", strings.ReplaceAll(b[1], "127.0.0.1:8080", m.Addr()), i+1)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", script.String()).CombinedOutput()
	t.Logf("README examples output:\n%s", out)
	if err != nil {
		t.Fatalf("README examples failed: %v", err)
	}
	for i := range blocks {
		if marker := fmt.Sprintf("@@block %d ok", i+1); !strings.Contains(string(out), marker) {
			t.Errorf("README block %d did not complete", i+1)
		}
	}
	first := strings.SplitN(string(out), "\n", 2)[0] // echo "$JOB"
	id := strings.TrimPrefix(first, m.URL()+"/v1/jobs/")
	if id == first || id == "" {
		t.Fatalf("first README block printed %q, want %s/v1/jobs/<id>", first, m.URL())
	}
	if j := waitJob(t, m.URL(), id, 10*time.Second); j.Status != "succeeded" {
		t.Errorf("README job %s ended %s (%s), want succeeded", id, j.Status, j.Error)
	}
	if runs := results(t, m.URL(), id); len(runs) != 4 {
		t.Errorf("README job has %d runs, want 4", len(runs))
	}
}

// TestReadmeKeysBlock runs the README's `benchq keys` block verbatim, with
// the built binary as benchq, against an all-in-one with a redis-server
// child on a temporary data directory: the block finds that Redis as a
// newcomer's shell would, by the data directory alone.
func TestReadmeKeysBlock(t *testing.T) {
	for _, tool := range []string{"redis-server", "curl", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not on PATH under CI: %v", tool, err)
			}
			t.Skipf("%s not installed; skipping the README keys block", tool)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, b := range regexp.MustCompile("(?s)```bash\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(b[1], "benchq keys add ci") {
			block = b[1]
		}
	}
	if block == "" {
		t.Fatal("README.md has no bash block with benchq keys add ci")
	}
	dir := t.TempDir()
	m := startMain(t, func(c *config.Config) { c.DataDir = dir })
	bin := buildBenchq(t)
	script := "set -eu\n" + strings.ReplaceAll(block, "127.0.0.1:8080", m.Addr()) + "echo \"@@ci $KEY\"\n"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "BENCHQ_DATA_DIR="+dir)
	cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "BENCHQ_REDIS_URL=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README keys block failed: %v\n%s", err, out)
	}
	// The block's last command shows the ci key admitted (200); the
	// all-in-one left open mode when the first key was created.
	if !regexp.MustCompile(`(?m)^200$`).Match(out) || !regexp.MustCompile(`Revoked key_\w+ \("ops"\)`).Match(out) {
		t.Errorf("README keys block output lacks the 200 of the ci key or the revocation:\n%s", out)
	}
	if resp, _ := call(t, http.MethodGet, m.URL()+"/v1/jobs", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/jobs without a key after the block = %d, want 401", resp.StatusCode)
	}
}
