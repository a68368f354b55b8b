package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
)

// writeSpec writes a job spec to a file and returns its path.
func writeSpec(t *testing.T, spec any) string {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// smallSpec is 1 target × c=2 × 200 requests × 2 repeats.
func smallSpec(tg *testservers.Target, thresholds ...string) map[string]any {
	return map[string]any{
		"targets":    []map[string]string{{"name": "t", "url": tg.URL}},
		"sweep":      map[string]any{"concurrency": []int{2}, "requests": []int{200}, "repeats": 2},
		"thresholds": thresholds,
	}
}

// TestSubmitWaitExitCodes runs `benchq submit --wait` through run()
// against the all-in-one service: the exit status is the gate CI uses.
func TestSubmitWaitExitCodes(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "hello", 0)
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		want    int
		verdict string
	}{
		{"passing threshold", []string{writeSpec(t, smallSpec(tg, "failed_ratio <= 0.01"))}, clicmd.ExitOK, "## Verdict: pass"},
		{"failing threshold", []string{writeSpec(t, smallSpec(tg, "rps >= 1e12"))}, clicmd.ExitThresholdFailed, "## Verdict: fail"},
		{"no thresholds", []string{writeSpec(t, smallSpec(tg))}, clicmd.ExitOK, "## Verdict: none"},
		{"--ab without a file", []string{"--ab", "-n 200 -c 2 " + tg.URL}, clicmd.ExitOK, "## Verdict: none"},
		{"--out files", []string{writeSpec(t, smallSpec(tg, "failed_ratio <= 0.01")),
			"--out", filepath.Join(dir, "r.md"), "--out", filepath.Join(dir, "r.json"), "--out", filepath.Join(dir, "r.svg")}, clicmd.ExitOK, "## Verdict: pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"submit", "--wait", "--server", m.URL()}, tt.args...)
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != tt.want {
				t.Fatalf("benchq %q = exit %d, want %d\nstderr:\n%s", args, got, tt.want, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.verdict) || !mdRow.MatchString(stdout.String()) {
				t.Errorf("stdout lacks the Markdown summary with %q:\n%s", tt.verdict, stdout.String())
			}
			// Not a terminal: plain lines, no bar redraws.
			if strings.Contains(stderr.String(), "\r") {
				t.Errorf("stderr has carriage returns without a terminal:\n%q", stderr.String())
			}
			if !regexp.MustCompile(`benchq: job \S+ submitted, \d+ runs`).MatchString(stderr.String()) ||
				!regexp.MustCompile(`succeeded  (2/2|1/1) runs`).MatchString(stderr.String()) {
				t.Errorf("stderr lacks the submission and final status lines:\n%s", stderr.String())
			}
		})
	}
	t.Run("out files content", func(t *testing.T) {
		md, _ := os.ReadFile(filepath.Join(dir, "r.md"))
		if !strings.Contains(string(md), "## Verdict: pass") {
			t.Errorf("r.md = %q, want the Markdown report", md)
		}
		js, _ := os.ReadFile(filepath.Join(dir, "r.json"))
		var doc struct {
			Job  struct{ Status string } `json:"job"`
			Runs []job.Run               `json:"runs"`
		}
		if err := json.Unmarshal(js, &doc); err != nil || doc.Job.Status != "succeeded" || len(doc.Runs) != 2 {
			t.Errorf("r.json: %v, job %q with %d runs; want succeeded with 2 runs", err, doc.Job.Status, len(doc.Runs))
		}
		svg, _ := os.ReadFile(filepath.Join(dir, "r.svg"))
		checkXML(t, svg)
	})
}

// mdRow is a row of the Markdown summary's table: a target and its
// successful req/s, with its share of errors if any, marked † when the
// in-process load generator was short of CPU (on a busy machine, or
// sharing it with the API and Redis, it may be) and ‡ when noisy.
var mdRow = regexp.MustCompile(`\n\| [^|]+ \| [0-9.]+( \([^)]* errors\))?( †)?( ‡)? \|\n`)

// TestSubmitWaitCanceled cancels a long job once its first progress shows:
// the waiting submit must end with exit 2.
func TestSubmitWaitCanceled(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "slow enough", 0)
	spec := map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "duration": []string{"60s"}, "repeats": 1},
	}
	stderr := newLineWatcher()
	var stdout bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(t.Context(), []string{"submit", writeSpec(t, spec), "--wait", "--server", m.URL()}, nil, &stdout, stderr)
	}()
	id := stderr.waitFor(t, regexp.MustCompile(`job (\S+) submitted`), 20*time.Second)
	stderr.waitFor(t, regexp.MustCompile(`running  0/1 runs  [1-9]\d* requests in this run`), 20*time.Second)
	if resp, b := call(t, http.MethodDelete, m.URL()+"/v1/jobs/"+id, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE = %d %s, want 202", resp.StatusCode, b)
	}
	select {
	case got := <-code:
		if got != clicmd.ExitJobEnded {
			t.Errorf("submit --wait of a canceled job = exit %d, want %d\nstderr:\n%s", got, clicmd.ExitJobEnded, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("submit --wait still waiting 20 s after the cancel\nstderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), id+"  canceled") {
		t.Errorf("stderr lacks the canceled status line:\n%s", stderr.String())
	}
}

// TestSubmitErrors: every usage, connection and API problem is exit 3,
// with nothing on stdout.
func TestSubmitErrors(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	good := writeSpec(t, smallSpec(tg))
	notJSON := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(notJSON, []byte("{"), 0o600)
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"unreachable server", []string{good, "--server", closed}, "connection refused"},
		{"unreachable server, waiting", []string{good, "--wait", "--server", closed}, "connection refused"},
		{"bad flag", []string{good, "--server", m.URL(), "--bogus"}, "flag provided but not defined: -bogus"},
		{"bad server URL", []string{good, "--server", "127.0.0.1:8080"}, `server URL "127.0.0.1:8080"`},
		{"no spec", []string{"--server", m.URL()}, "want a job file"},
		{"file and --ab", []string{good, "--ab", "-n 1 " + tg.URL, "--server", m.URL()}, "not both"},
		{"missing file", []string{"/nonexistent/job.json", "--server", m.URL()}, "no such file"},
		{"not JSON", []string{notJSON, "--server", m.URL()}, "not valid JSON"},
		{"--out without --wait", []string{good, "--out", "r.md", "--server", m.URL()}, "--out needs --wait"},
		{"--out without extension", []string{good, "--wait", "--out", "report", "--server", m.URL()}, "no extension"},
		{"--out unknown format", []string{good, "--wait", "--out", "r.pdf", "--server", m.URL()}, "unknown format"},
		{"invalid spec", []string{"--ab", "-n 10 -c 0 " + tg.URL, "--server", m.URL()}, "422 Invalid job spec"},
		{"private target", []string{"--ab", "-n 10 http://10.0.0.1/", "--server", m.URL()}, "(field targets[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"submit"}, tt.args...)
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != clicmd.ExitError {
				t.Errorf("benchq %q = exit %d, want %d\nstderr:\n%s", args, got, clicmd.ExitError, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) || stdout.Len() != 0 {
				t.Errorf("benchq %q: stderr %q lacks %q, or stdout %q is not empty", args, stderr.String(), tt.stderr, stdout.String())
			}
		})
	}
}

// TestSubmitNoWait prints the job id only, reading the spec from stdin.
func TestSubmitNoWait(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	b, _ := json.Marshal(smallSpec(tg))
	var stdout, stderr bytes.Buffer
	args := []string{"submit", "-", "--server", m.URL(), "--idempotency-key", "ci-run-1"}
	if got := run(t.Context(), args, bytes.NewReader(b), &stdout, &stderr); got != clicmd.ExitOK {
		t.Fatalf("benchq %q = exit %d (%s), want 0", args, got, stderr.String())
	}
	id := strings.TrimSpace(stdout.String())
	if resp, body := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+id, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("stdout %q is not a job id: GET = %d %s", stdout.String(), resp.StatusCode, body)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q, want nothing without --wait and a webhook", stderr.String())
	}
}

// TestClientCommandsHelp: `benchq --help` lists the client commands and
// each one's -h lists its flags, exit 0.
func TestClientCommandsHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := run(t.Context(), []string{"--help"}, nil, &stdout, &stderr); got != 0 {
		t.Fatalf("benchq --help = exit %d", got)
	}
	for _, s := range []string{"benchq submit", "--wait", "benchq get JOB_ID", "benchq cancel JOB_ID", "benchq wait JOB_ID", "benchq list", "benchq version", "BENCHQ_API_KEY"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("benchq --help lacks %q", s)
		}
	}
	flags := map[string][]string{
		"submit":  {"-server", "-key", "-ab", "-wait", "-out", "-idempotency-key", "-timeout", "-quiet", "-retry-wait", "BENCHQ_SERVER", "BENCHQ_API_KEY"},
		"wait":    {"-server", "-key", "-out", "-timeout", "-quiet"},
		"list":    {"-server", "-key", "-status", "-label", "-limit", "-cursor", "-json"},
		"version": {"usage: benchq version"},
		"get":     {"-server", "-key", "-json"},
		"cancel":  {"-server", "-key"},
	}
	for cmd, want := range flags {
		var stdout, stderr bytes.Buffer
		if got := run(t.Context(), []string{cmd, "-h"}, nil, &stdout, &stderr); got != clicmd.ExitOK {
			t.Errorf("benchq %s -h = exit %d, want 0", cmd, got)
		}
		for _, f := range want {
			if !strings.Contains(stderr.String(), f) {
				t.Errorf("benchq %s -h lacks %q:\n%s", cmd, f, stderr.String())
			}
		}
	}
}

// lineWatcher is a stderr that tests can wait on.
type lineWatcher struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLineWatcher() *lineWatcher { return &lineWatcher{changed: make(chan struct{}, 1)} }

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return w.buf.Write(p)
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until the output matches re and returns the first
// submatch (or the whole match).
func (w *lineWatcher) waitFor(t *testing.T, re *regexp.Regexp, limit time.Duration) string {
	t.Helper()
	deadline := time.After(limit)
	for {
		if m := re.FindStringSubmatch(w.String()); m != nil {
			return m[len(m)-1]
		}
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("no output matching %s within %s:\n%s", re, limit, w.String())
		}
	}
}

// checkXML asserts the document parses as XML with an <svg> root.
func checkXML(t *testing.T, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && root == "" {
			root = el.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("SVG root element = %q, want svg", root)
	}
}

// TestSubmitWebhookSecretAndIdempotency: the secret the server returns
// with the submission reaches stderr only when it is a terminal, and
// --webhook-secret-file otherwise; a CI log only learns that one was
// issued. A retried submit with the same --idempotency-key prints the
// same job id and gets the same secret again.
func TestSubmitWebhookSecretAndIdempotency(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	receiver := testservers.StartTarget(t, "ok", 0)
	spec := smallSpec(tg)
	spec["webhook"] = map[string]any{"url": receiver.URL}
	path := writeSpec(t, spec)
	dir := t.TempDir()
	secretRe := regexp.MustCompile(`whsec_\S+`)
	noEnv := func(string) string { return "" }
	submitWith := func(t *testing.T, tty bool, want int, extra ...string) (id, stderr string) {
		t.Helper()
		var out, errOut bytes.Buffer
		args := append([]string{path, "--server", m.URL()}, extra...)
		env := clicmd.Env{Getenv: noEnv, Stdout: &out, Stderr: &errOut, TTY: tty}
		if got := clicmd.Submit(t.Context(), args, env); got != want {
			t.Fatalf("benchq submit %q (tty %v) = exit %d (%s), want %d", args, tty, got, errOut.String(), want)
		}
		if secretRe.MatchString(out.String()) {
			t.Errorf("stdout shows the secret: %q", out.String())
		}
		return strings.TrimSpace(out.String()), errOut.String()
	}
	readSecret := func(t *testing.T, file string) string {
		t.Helper()
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", file, fi.Mode().Perm())
		}
		b, _ := os.ReadFile(file)
		if !secretRe.Match(b) || strings.ContainsAny(string(b), " \n") {
			t.Errorf("%s = %q, want the secret alone", file, b)
		}
		return string(b)
	}

	t.Run("not a terminal", func(t *testing.T) {
		for _, quiet := range []bool{false, true} {
			extra := []string{"--idempotency-key", "log-" + strconv.FormatBool(quiet)}
			if quiet {
				extra = append(extra, "--quiet")
			}
			_, stderr := submitWith(t, false, clicmd.ExitOK, extra...)
			if secretRe.MatchString(stderr) || !strings.Contains(stderr, "issued a webhook secret") || !strings.Contains(stderr, "--webhook-secret-file") {
				t.Errorf("quiet %v: stderr = %q, want a note on --webhook-secret-file and no secret", quiet, stderr)
			}
		}
	})
	t.Run("terminal", func(t *testing.T) {
		_, stderr := submitWith(t, true, clicmd.ExitOK, "--quiet")
		if !regexp.MustCompile(`webhook secret of job \S+: whsec_\S+`).MatchString(stderr) || !strings.Contains(stderr, "GET never shows it again") {
			t.Errorf("stderr = %q, want the webhook secret and that GET never shows it again", stderr)
		}
	})
	t.Run("file and retry", func(t *testing.T) {
		// Writing fails: the job exists, exit 3, and the retry gets it back.
		bad := filepath.Join(dir, "missing", "secret")
		_, stderr := submitWith(t, false, clicmd.ExitError, "--idempotency-key", "ci-42", "--webhook-secret-file", bad)
		if secretRe.MatchString(stderr) || !strings.Contains(stderr, "was submitted") || !strings.Contains(stderr, "same --idempotency-key") {
			t.Errorf("stderr = %q, want the failure, the hint to retry, and no secret", stderr)
		}
		first := filepath.Join(dir, "first")
		if err := os.WriteFile(first, []byte("old and readable by all"), 0o644); err != nil {
			t.Fatal(err)
		}
		var ids, secrets []string
		for _, file := range []string{first, filepath.Join(dir, "second")} {
			id, stderr := submitWith(t, false, clicmd.ExitOK, "--idempotency-key", "ci-42", "--webhook-secret-file", file)
			if secretRe.MatchString(stderr) || !strings.Contains(stderr, "written to "+file) {
				t.Errorf("stderr = %q, want where the secret went, not the secret", stderr)
			}
			ids, secrets = append(ids, id), append(secrets, readSecret(t, file))
		}
		if ids[0] == "" || ids[0] != ids[1] {
			t.Errorf("job ids of two submits with one idempotency key = %q, want one id twice", ids)
		}
		if secrets[0] != secrets[1] {
			t.Errorf("secrets of the submit and its retry = %q, want one", secrets)
		}
	})
	t.Run("no webhook", func(t *testing.T) {
		file := filepath.Join(dir, "none")
		var out, errOut bytes.Buffer
		args := []string{writeSpec(t, smallSpec(tg)), "--server", m.URL(), "--webhook-secret-file", file}
		if got := clicmd.Submit(t.Context(), args, clicmd.Env{Getenv: noEnv, Stdout: &out, Stderr: &errOut}); got != clicmd.ExitOK {
			t.Fatalf("exit %d (%s), want 0", got, errOut.String())
		}
		if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) || !strings.Contains(errOut.String(), "no webhook secret was issued") {
			t.Errorf("stat = %v, stderr %q; want no file and a note", err, errOut.String())
		}
	})
}
