package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

func TestPlanRedis(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/redis-server", nil }
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	tests := []struct {
		name     string
		cfg      config.Config
		lookPath func(string) (string, error)
		kind     redisKind
		reason   string
	}{
		{"url wins", config.Config{RedisURL: "redis://127.0.0.1:6379", DataDir: "/d"}, found, redisExternal, ""},
		{"child when installed", config.Config{DataDir: "/d"}, found, redisChild, ""},
		{"ephemeral", config.Config{DataDir: "/d", Ephemeral: true}, found, redisEmbedded, "--ephemeral"},
		{"not installed", config.Config{DataDir: "/d"}, missing, redisEmbedded, "redis-server is not on PATH"},
		{"no data dir", config.Config{}, found, redisEmbedded, "no data directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planRedis(tt.cfg, tt.lookPath)
			if p.kind != tt.kind || !strings.Contains(p.reason, tt.reason) || (tt.reason == "") != (p.reason == "") {
				t.Errorf("planRedis = %+v, want kind %d with a reason containing %q", p, tt.kind, tt.reason)
			}
			if p.kind == redisChild && p.bin != "/usr/bin/redis-server" {
				t.Errorf("child binary = %q", p.bin)
			}
		})
	}
}

// allInOneEnv is the environment of an all-in-one under test: this one's
// without BENCHQ_* (a developer's BENCHQ_REDIS_URL must not leak in), the
// XDG data home in a temp dir (nothing may be written under the real
// ~/.local/share), and the data directory given.
func allInOneEnv(t *testing.T, dataDir string, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BENCHQ_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "XDG_DATA_HOME="+t.TempDir(), "BENCHQ_SHUTDOWN_TIMEOUT=10s", "BENCHQ_DATA_DIR="+dataDir)
	return append(env, extra...)
}

var childLine = regexp.MustCompile(`redis-server child keeps .* data_dir=(\S+) socket=(\S+) pid=(\d+) redis_url=(\S+)`)

// running reports whether pid is a live process (a zombie nobody reaped
// is not: the all-in-one's orphaned child is reparented, and init in a
// container may never reap it).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	return !bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z"))
}

func waitGone(t *testing.T, pid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for running(pid) {
		if time.Now().After(deadline) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill() // not left behind by a failed test
			}
			t.Fatalf("redis-server child %d still running %s after benchq ended", pid, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// aio is an all-in-one under test with the child it logged.
type aio struct {
	*process
	childPid int
	redisURL string
	addr     string
}

// startAllInOne starts the binary on a free port and reads, from its log,
// the redis-server child it started and the address it listens on.
func startAllInOne(t *testing.T, bin string, env []string, dataDir string) *aio {
	t.Helper()
	p := startProcess(t, bin, env, "--addr", "127.0.0.1:0")
	m := p.WaitLine(t, childLine, 30*time.Second)
	if m[1] != dataDir || m[2] != filepath.Join(dataDir, "redis.sock") {
		t.Errorf("Redis line names data_dir=%s socket=%s, want %s and its redis.sock", m[1], m[2], dataDir)
	}
	pid, _ := strconv.Atoi(m[3])
	if !running(pid) {
		t.Fatalf("logged child pid %d is not running", pid)
	}
	return &aio{process: p, childPid: pid, redisURL: m[4], addr: p.WaitAddr(t)}
}

// keptJob is what a restart must give back: a job made with an API key,
// and its results as the API served them.
type keptJob struct {
	key, id string
	results []byte
}

// runKeptJob creates an API key through the redis URL the log names (so
// that URL reaches the child) and runs a small job with it.
func runKeptJob(t *testing.T, a *aio) keptJob {
	t.Helper()
	base := keyedBase(t, a.redisURL, a.addr)
	tg := testservers.StartTarget(t, "kept", 0)
	j := submit(t, base, map[string]any{
		"name":    "persist",
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1, 2}, "requests": []int{50}, "repeats": 2},
	})
	if got := waitJob(t, base, j.ID, 60*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	if runs := results(t, base, j.ID); len(runs) != 4 {
		t.Fatalf("job has %d runs, want 4", len(runs))
	}
	_, res := call(t, http.MethodGet, base+"/v1/jobs/"+j.ID+"/results", nil)
	key := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "@"+a.addr)
	return keptJob{key: key, id: j.ID, results: res}
}

// checkKept asserts that a restarted all-in-one serves the job as before
// to the key made before: the key, the job and its results all survived.
func checkKept(t *testing.T, a *aio, k keptJob) {
	t.Helper()
	base := "http://" + k.key + "@" + a.addr
	resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+k.id, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"status":"succeeded"`) {
		t.Fatalf("after restart GET job = %d %s, want the succeeded job", resp.StatusCode, b)
	}
	if _, got := call(t, http.MethodGet, base+"/v1/jobs/"+k.id+"/results", nil); !bytes.Equal(got, k.results) {
		t.Errorf("after restart results differ:\n got %s\nwant %s", got, k.results)
	}
}

// TestAllInOneKeepsDataAcrossRestart: with redis-server installed the
// all-in-one keeps its API key, job and results through SIGTERM and a new
// start on the same data directory, and its child ends with it.
func TestAllInOneKeepsDataAcrossRestart(t *testing.T) {
	redistest.Binary(t)
	bin := buildBenchq(t)
	dir := filepath.Join(t.TempDir(), "data")
	env := allInOneEnv(t, dir)

	first := startAllInOne(t, bin, env, dir)
	if b, err := os.ReadFile(filepath.Join(dir, "benchq.lock")); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(first.Pid()) {
		t.Errorf("benchq.lock = %q (%v), want the all-in-one's pid %d", b, err, first.Pid())
	}
	kept := runKeptJob(t, first)
	first.Stop(t)
	waitGone(t, first.childPid, 5*time.Second)

	second := startAllInOne(t, bin, env, dir)
	checkKept(t, second, kept)
	second.Stop(t)
	waitGone(t, second.childPid, 5*time.Second)
}

// TestAllInOneKilledTakesItsChild: SIGKILL gives benchq no chance to stop
// its redis-server; Pdeathsig must, and the next start on the directory
// has what was written more than a second (appendfsync everysec) before.
func TestAllInOneKilledTakesItsChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux's; elsewhere the next start shuts a left child down (internal/localredis tests)")
	}
	redistest.Binary(t)
	bin := buildBenchq(t)
	dir := filepath.Join(t.TempDir(), "data")
	env := allInOneEnv(t, dir)

	first := startAllInOne(t, bin, env, dir)
	kept := runKeptJob(t, first)
	time.Sleep(1500 * time.Millisecond) // past one appendfsync everysec
	first.Kill(t)
	waitGone(t, first.childPid, 5*time.Second)

	second := startAllInOne(t, bin, env, dir)
	checkKept(t, second, kept)
	second.Stop(t)
}

// TestSecondAllInOneOnSameDataDirFails: two redis-servers on one
// append-only file would corrupt it, so the second benchq exits, saying
// who holds the directory and what to do, and the first serves on.
func TestSecondAllInOneOnSameDataDirFails(t *testing.T) {
	redistest.Binary(t)
	bin := buildBenchq(t)
	dir := filepath.Join(t.TempDir(), "data")
	env := allInOneEnv(t, dir)
	first := startAllInOne(t, bin, env, dir)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a second that starts would run on
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second all-in-one: %v, want exit status 1; output:\n%s", err, out)
	}
	for _, want := range []string{dir + ": data directory in use by another benchq (pid " + strconv.Itoa(first.Pid()) + ")", "--data-dir", "--ephemeral"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("second all-in-one's output lacks %q:\n%s", want, out)
		}
	}
	if resp, b := call(t, http.MethodGet, "http://"+first.addr+"/readyz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("first all-in-one /readyz = %d %s after the second failed", resp.StatusCode, b)
	}
	if !running(first.childPid) {
		t.Error("the first all-in-one's redis-server died with the second's attempt")
	}
	first.Stop(t)
}

var memoryLine = regexp.MustCompile(`Redis: embedded in-memory; jobs, results and API keys are NOT persisted.* reason="?([^"]*)"?`)

// TestAllInOneInMemory: without redis-server on PATH, or with --ephemeral,
// the all-in-one runs on the embedded Redis, warns that nothing is kept and
// why, and writes nothing into the data directory.
func TestAllInOneInMemory(t *testing.T) {
	bin := buildBenchq(t)
	tests := []struct {
		name   string
		args   []string
		path   string // "" keeps PATH
		reason string
	}{
		{"redis-server not on PATH", nil, t.TempDir(), "redis-server is not on PATH"},
		{"ephemeral", []string{"--ephemeral"}, "", "--ephemeral"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path == "" {
				redistest.Binary(t) // else this case proves nothing
			}
			dir := filepath.Join(t.TempDir(), "data")
			var extra []string
			if tt.path != "" {
				extra = append(extra, "PATH="+tt.path) // the later PATH wins
			}
			p := startProcess(t, bin, allInOneEnv(t, dir, extra...), append([]string{"--addr", "127.0.0.1:0"}, tt.args...)...)
			m := p.WaitLine(t, memoryLine, 30*time.Second)
			if !strings.Contains(m[1], tt.reason) {
				t.Errorf("warning's reason = %q, want it to say %q", m[1], tt.reason)
			}
			addr := p.WaitAddr(t)
			if resp, b := call(t, http.MethodGet, "http://"+addr+"/readyz", nil); resp.StatusCode != http.StatusOK {
				t.Errorf("/readyz = %d %s", resp.StatusCode, b)
			}
			p.Stop(t)
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("in-memory all-in-one touched its data directory: %v", err)
			}
		})
	}
}

// TestChildFailingAtEveryRestartFailsTheService: a redis-server child
// that dies under a running all-in-one is restarted; one that then fails
// at every restart is a component failure (runService exits 1), not a
// service left failing every request.
func TestChildFailingAtEveryRestartFailsTheService(t *testing.T) {
	real := redistest.Binary(t)
	bin := filepath.Join(t.TempDir(), "redis-server")
	script := func(body string) {
		t.Helper()
		// Written beside and renamed over, so no exec meets a half-written file.
		tmp := bin + ".new"
		if err := os.WriteFile(tmp, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, bin); err != nil {
			t.Fatal(err)
		}
	}
	script(`exec "` + real + `" "$@"`)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	m := startMain(t, func(c *config.Config) { c.DataDir = filepath.Join(t.TempDir(), "data") })
	if m.redis.child == nil {
		t.Fatal("no redis-server child started")
	}
	script("echo 'Fatal error: bad append only file' >&2; exit 1")
	p, err := os.FindProcess(m.redis.child.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-m.Failed():
		if msg := err.Error(); !strings.Contains(msg, "redis-server child exited for good") || !strings.Contains(msg, "bad append only file") {
			t.Errorf("Failed = %v, want the child given up, with its last output", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no failure reported 20 s after the child started failing at every restart")
	}
}
