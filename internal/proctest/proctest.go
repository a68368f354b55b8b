package proctest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
	buildOut  []byte
)

// Build compiles ./cmd/benchq of this module once per test binary and
// returns the path of the result. The binary lives in a directory that
// outlives any one test; Cleanup removes it from TestMain, or the OS's
// temporary directory reaper does.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, buildErr = os.MkdirTemp("", "benchq-proctest-")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "benchq")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/benchq")
		cmd.Dir = root
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/benchq: %v\n%s", buildErr, buildOut)
	}
	return buildPath
}

// Cleanup removes the binary Build made; call it from TestMain after m.Run.
func Cleanup() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// Main is the TestMain of a package whose tests call Build: it runs the
// tests, removes the binary and exits with the tests' code.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// Process is a running benchq whose log lines (stderr) are kept for
// WaitLine and WaitAddr and written to the test's log.
type Process struct {
	Cmd   *exec.Cmd
	lines chan string
	done  chan error
}

// Start runs bin with args and env (nil means the test's own environment).
func Start(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	name := "benchq"
	if len(args) > 0 {
		name += " " + args[0]
	}
	return StartCmd(t, cmd, name)
}

// StartCmd is Start for a command the test built itself, e.g. benchq
// behind taskset and nice; name leads its log lines in the test's log.
func StartCmd(t testing.TB, cmd *exec.Cmd, name string) *Process {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &Process{Cmd: cmd, lines: make(chan string, 1000), done: make(chan error, 1)}
	// The reader logs through t; it must be finished before the test is,
	// or a late line panics ("Log in goroutine after Test has completed").
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			t.Logf("%s: %s", name, sc.Text())
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return p
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

var listenLine = regexp.MustCompile(`API listening.* addr=(127\.0\.0\.1:\d+)`)

// WaitAddr reads the log until the API names its bound address.
func (p *Process) WaitAddr(t testing.TB) string {
	t.Helper()
	return p.WaitLine(t, listenLine, 30*time.Second)[1]
}

// WaitLine reads the log until a line matches re and returns its submatches.
func (p *Process) WaitLine(t testing.TB, re *regexp.Regexp, limit time.Duration) []string {
	t.Helper()
	timeout := time.After(limit)
	for {
		select {
		case line := <-p.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case err := <-p.done:
			t.Fatalf("benchq exited (%v) before logging a line matching %s", err, re)
		case <-timeout:
			t.Fatalf("benchq logged no line matching %s within %s", re, limit)
		}
	}
}

// Stop sends SIGTERM and expects a clean exit within 20 s.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("benchq %v after SIGTERM: %v, want exit 0", p.Cmd.Args[1:], err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("benchq %v still running 20s after SIGTERM", p.Cmd.Args[1:])
	}
}

// AddKey runs `benchq keys add NAME [flags]` against redisURL and returns
// the new key.
func AddKey(t testing.TB, bin, redisURL, name string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"keys", "add", name}, flags...)...)
	cmd.Env = append(os.Environ(), "BENCHQ_REDIS_URL="+redisURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("benchq keys add %s: %v\n%s", name, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// KeyedBase creates a key named name and returns the API at addr's base
// URL with the key as its user ("http://KEY@addr").
func KeyedBase(t testing.TB, bin, redisURL, addr, name string, flags ...string) string {
	t.Helper()
	return "http://" + AddKey(t, bin, redisURL, name, flags...) + "@" + addr
}

// Request builds a request to url; a user in url (a KeyedBase) becomes
// the bearer token. It says Content-Type: application/json, as a JSON
// client does, even without a body: the open mode refuses a POST that
// does not.
func Request(t testing.TB, method, url string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if u := req.URL.User; u != nil {
		req.URL.User = nil
		req.Header.Set("Authorization", "Bearer "+u.Username())
	}
	return req
}

// Call sends Request(method, url, body) and returns the answer with its
// body read; a transport error fails the test.
func Call(t testing.TB, method, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(Request(t, method, url, body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp, b
}

// Kill ends the process with SIGKILL and returns when it is gone; one
// that already exited is only waited for.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill benchq %v: %v", p.Cmd.Args[1:], err)
	}
	<-p.done
}

// Buffered returns the log lines read but not yet taken by a wait.
func (p *Process) Buffered() []string {
	var lines []string
	for {
		select {
		case line := <-p.lines:
			lines = append(lines, line)
		default:
			return lines
		}
	}
}

// TryLine takes the next log line if one is waiting.
func (p *Process) TryLine() (string, bool) {
	select {
	case line := <-p.lines:
		return line, true
	default:
		return "", false
	}
}
