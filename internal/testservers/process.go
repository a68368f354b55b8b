package testservers

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// CPUTarget is a running cputarget process (see its package doc).
type CPUTarget struct {
	URL string // http://127.0.0.1:PORT
	Pid int
	cmd *exec.Cmd
}

// MetricsURL is the target's own Prometheus endpoint.
func (c *CPUTarget) MetricsURL() string { return c.URL + "/metrics" }

var cpuTargetBuild struct {
	once sync.Once
	path string
	err  error
}

// buildCPUTarget compiles ./internal/testservers/cputarget once per test
// binary.
func buildCPUTarget(t testing.TB) string {
	t.Helper()
	b := &cpuTargetBuild
	b.once.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			b.err = err
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		dir, err := os.MkdirTemp("", "cputarget")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "cputarget")
		cmd := exec.Command("go", "build", "-o", b.path, "./internal/testservers/cputarget")
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build cputarget: %v\n%s", err, msg)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// CPUTargetConfig says how a cputarget runs.
type CPUTargetConfig struct {
	// CPUs pins it with taskset -c (e.g. "0"); "" runs it unpinned.
	CPUs string
	// Favoured gives it the CPU before other work on the machine, as a
	// benchmarked server has it: nice -20, in a session of its own whose
	// autogroup is at nice -20 too (FavouredCommand). A test that needs
	// it busy on all its cores sets it.
	Favoured bool
}

// StartCPUTarget runs the cputarget test server as a process of its own,
// as cfg says, and stops it when the test ends.
func StartCPUTarget(t testing.TB, cfg CPUTargetConfig) *CPUTarget {
	t.Helper()
	bin := buildCPUTarget(t)
	var cmd *exec.Cmd
	switch {
	case cfg.Favoured:
		cmd = FavouredCommand(t, cfg.CPUs, bin)
	case cfg.CPUs != "":
		cmd = exec.Command(Require(t, "taskset", "util-linux"), "-c", cfg.CPUs, bin)
	default:
		cmd = exec.Command(bin)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start cputarget: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if cfg.Favoured {
		FavourStarted(cmd.Process.Pid)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("cputarget said %q (%v), want its address", line, err)
	}
	return &CPUTarget{URL: "http://" + addr, Pid: cmd.Process.Pid, cmd: cmd}
}

// FavouredCommand is the command line args run so that it gets the CPU
// before other work on the machine: at nice -20, pinned with taskset -c
// cpus unless cpus is "", in a session of its own, whose autogroup
// FavourStarted raises to nice -20 too once it runs (with autogroups the
// kernel shares CPU fairly between sessions first, whatever a process's
// own nice). It needs root (CAP_SYS_NICE): without, it skips the test,
// or fails it under CI, where the tests run as root.
func FavouredCommand(t testing.TB, cpus string, args ...string) *exec.Cmd {
	t.Helper()
	args = favouredArgs(t, cpus, args...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// favouredArgs is args behind nice -20 and, unless cpus is "", taskset.
func favouredArgs(t testing.TB, cpus string, args ...string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("testservers: a favoured process needs root (nice -20) under CI")
		}
		t.Skip("testservers: a favoured process needs root (nice -20); skipping")
	}
	if cpus != "" {
		args = append([]string{Require(t, "taskset", "util-linux"), "-c", cpus}, args...)
	}
	return append([]string{Require(t, "nice", "coreutils"), "-n", "-20"}, args...)
}

// FavourStarted raises the autogroup of a started FavouredCommand, pid,
// to nice -20. Absent when the kernel has no autogroups: nice alone then
// does it.
func FavourStarted(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/autogroup", pid), []byte("-20"), 0)
}

// Exporter is a running Prometheus exporter.
type Exporter struct {
	URL string // its /metrics
	Pid int
	cmd *exec.Cmd
}

// Kill stops the exporter now, as a crash would.
func (e *Exporter) Kill() {
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
}

// StartExporter runs a Prometheus exporter from Debian (name is the binary,
// e.g. "prometheus-node-exporter", pkg its package) on a free loopback
// port, passing listenFlag=127.0.0.1:PORT and args, and waits until its
// /metrics answers. It is killed when the test ends; a missing binary
// skips the test, or fails it under CI.
func StartExporter(t testing.TB, name, pkg, listenFlag string, args ...string) *Exporter {
	t.Helper()
	bin := Require(t, name, pkg)
	for try := 0; ; try++ {
		port := freePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, append([]string{listenFlag + "=" + addr}, args...)...)
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &syncWriter{w: &log}, &syncWriter{w: &log}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		e := &Exporter{URL: "http://" + addr + "/metrics", Pid: cmd.Process.Pid, cmd: cmd}
		if waitMetrics(e.URL, 10*time.Second) {
			t.Cleanup(e.Kill)
			return e
		}
		e.Kill()
		if try == 2 {
			t.Fatalf("%s did not serve %s within 10s: %s", name, e.URL, log.String())
		}
	}
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitMetrics(url string, limit time.Duration) bool {
	c := &http.Client{Timeout: time.Second}
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
	}
	return false
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// userHZ is Linux's USER_HZ, the unit of /proc's CPU times: 100 on every
// architecture Go supports.
const userHZ = 100

// ProcessCPU is the CPU time process pid has used (utime + stime of
// /proc/PID/stat), what its process_cpu_seconds_total counts.
func ProcessCPU(t testing.TB, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name in parentheses may hold spaces: count from its end.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, err1 := strconv.ParseFloat(f[11], 64) // field 14 of proc(5)
	stime, err2 := strconv.ParseFloat(f[12], 64) // field 15
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	return (utime + stime) / userHZ
}

// SystemBusyCPU is the CPU time all the machine's cores spent outside
// idle since boot (/proc/stat's cpu line: user, nice, system, iowait,
// irq, softirq, steal), what node_cpu_seconds_total{mode!="idle"} sums.
func SystemBusyCPU(t testing.TB) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		t.Fatalf("/proc/stat starts %q", line)
	}
	var busy float64
	for i, v := range f[1:9] {
		if i == 3 { // idle
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("/proc/stat: %q", line)
		}
		busy += n
	}
	return busy / userHZ
}
