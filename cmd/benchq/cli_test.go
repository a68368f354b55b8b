package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/testservers"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		if got := run(t.Context(), args, nil, &stdout, &stderr); got != clicmd.ExitOK {
			t.Fatalf("benchq %q = exit %d, stderr %s", args, got, stderr.String())
		}
		// A test binary carries build info with the Go version at least.
		if !regexp.MustCompile(`^benchq \S+\n(.*\n)*go go1\.\d+`).MatchString(stdout.String()) {
			t.Errorf("benchq %q stdout = %q, want the version and the Go version", args, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if got := run(t.Context(), []string{"version", "extra"}, nil, &stdout, &stderr); got != clicmd.ExitError {
		t.Errorf("benchq version extra = exit %d, want %d", got, clicmd.ExitError)
	}
}

// TestList lists jobs of the all-in-one through the filters GET /v1/jobs
// supports, as a table and as JSON.
func TestList(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	small := func(name, env string) apiJob {
		return submit(t, m.URL(), map[string]any{
			"name": name, "labels": map[string]string{"env": env},
			"targets": []map[string]string{{"url": tg.URL}},
			"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{20}},
		})
	}
	a, b := small("alpha", "ci"), small("beta", "dev")
	waitJob(t, m.URL(), a.ID, 30*time.Second)
	waitJob(t, m.URL(), b.ID, 30*time.Second)
	// A finished job's progress says what was done, not the last run's
	// counter reset.
	if _, body := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+a.ID, nil); !strings.Contains(string(body), `"requests_done":20`) {
		t.Errorf("finished job = %s, want requests_done 20", body)
	}
	srv := []string{"--server", m.URL()}
	tests := []struct {
		name     string
		args     []string
		want     int
		has, not []string
	}{
		{"all", []string{"list"}, clicmd.ExitOK, []string{"ID", "STATUS", a.ID + "  succeeded  1/1", "alpha", b.ID, "beta"}, nil},
		{"by label", []string{"list", "--label", "env:ci"}, clicmd.ExitOK, []string{a.ID, "alpha"}, []string{b.ID}},
		{"by name part", []string{"list", "--name", "ALPH"}, clicmd.ExitOK, []string{a.ID, "alpha"}, []string{b.ID}},
		{"by status", []string{"list", "--status", "running"}, clicmd.ExitOK, nil, []string{a.ID, b.ID}},
		{"one per page", []string{"list", "--limit", "1"}, clicmd.ExitOK, []string{b.ID}, []string{a.ID}},
		{"json", []string{"list", "--json", "--label", "env:dev"}, clicmd.ExitOK, []string{`"next_cursor"`, b.ID}, []string{a.ID}},
		{"bad status", []string{"list", "--status", "done"}, clicmd.ExitError, nil, nil},
		{"bad label", []string{"list", "--label", "nocolon"}, clicmd.ExitError, nil, nil},
		{"argument", []string{"list", "extra"}, clicmd.ExitError, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append(tt.args, srv...)
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != tt.want {
				t.Fatalf("benchq %q = exit %d, want %d; stderr %s", args, got, tt.want, stderr.String())
			}
			for _, h := range tt.has {
				if !strings.Contains(stdout.String(), h) {
					t.Errorf("benchq %q stdout lacks %q:\n%s", args, h, stdout.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(stdout.String(), n) {
					t.Errorf("benchq %q stdout has %q:\n%s", args, n, stdout.String())
				}
			}
		})
	}
	t.Run("next page cursor", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		run(t.Context(), append([]string{"list", "--limit", "1"}, srv...), nil, &stdout, &stderr)
		c := regexp.MustCompile(`--cursor (\S+)`).FindStringSubmatch(stderr.String())
		if c == nil {
			t.Fatalf("benchq list --limit 1 of 2 jobs: stderr %q names no next cursor", stderr.String())
		}
		stdout.Reset()
		if got := run(t.Context(), append([]string{"list", "--limit", "1", "--cursor", c[1], "--json"}, srv...), nil, &stdout, &stderr); got != clicmd.ExitOK {
			t.Fatalf("second page = exit %d", got)
		}
		var page struct{ Jobs []apiJob }
		if err := json.Unmarshal(stdout.Bytes(), &page); err != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != a.ID {
			t.Errorf("second page = %v %s, want job %s alone", err, stdout.String(), a.ID)
		}
	})
}

// TestWait re-attaches to a running job: the same display and exit codes
// as submit --wait, through the same code.
func TestWait(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	srv := []string{"--server", m.URL()}
	running := submit(t, m.URL(), map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "duration": []string{"2s"}, "repeats": 2},
	})
	failing := submit(t, m.URL(), map[string]any{
		"targets":    []map[string]string{{"url": tg.URL}},
		"sweep":      map[string]any{"concurrency": []int{1}, "requests": []int{20}},
		"thresholds": []string{"rps >= 1e12"},
	})
	long := submit(t, m.URL(), map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "duration": []string{"60s"}},
	})
	tests := []struct {
		name   string
		args   []string
		want   int
		stderr *regexp.Regexp
	}{
		{"running job", []string{"wait", running.ID}, clicmd.ExitOK, regexp.MustCompile(`following job ` + running.ID + `(.|\n)*` + running.ID + `  succeeded  2/2 runs`)},
		{"failing verdict", []string{"wait", failing.ID}, clicmd.ExitThresholdFailed, regexp.MustCompile(`verdict fail`)},
		{"timeout leaves it running", []string{"wait", long.ID, "--timeout", "1s"}, clicmd.ExitError, regexp.MustCompile(`benchq wait: gave up waiting after 1s; job ` + long.ID + ` keeps running(.|\n)*benchq wait ` + long.ID)},
		{"unknown job", []string{"wait", "job_missing"}, clicmd.ExitError, regexp.MustCompile(`404`)},
		{"no id", []string{"wait"}, clicmd.ExitError, regexp.MustCompile(`want exactly one job id`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append(tt.args, srv...)
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != tt.want {
				t.Fatalf("benchq %q = exit %d, want %d; stderr %s", args, got, tt.want, stderr.String())
			}
			if !tt.stderr.MatchString(stderr.String()) {
				t.Errorf("benchq %q stderr = %q, want a match for %s", args, stderr.String(), tt.stderr)
			}
			if tt.want == clicmd.ExitOK && !mdRow.MatchString(stdout.String()) {
				t.Errorf("benchq %q stdout lacks the Markdown summary:\n%s", args, stdout.String())
			}
		})
	}
	call(t, http.MethodDelete, m.URL()+"/v1/jobs/"+long.ID, nil)
}

// TestSubmitRetryAfter: a submission refused with 429 (too many active
// jobs) is retried after the server's Retry-After, within --retry-wait.
func TestSubmitRetryAfter(t *testing.T) {
	m := startMain(t, func(c *config.Config) { c.MaxActiveJobs = 1 })
	tg := testservers.StartTarget(t, "x", 0)
	srv := []string{"--server", m.URL()}
	busy := func() apiJob {
		return submit(t, m.URL(), map[string]any{
			"targets": []map[string]string{{"url": tg.URL}},
			"sweep":   map[string]any{"concurrency": []int{1}, "duration": []string{"3s"}},
		})
	}
	tests := []struct {
		name   string
		args   []string
		want   int
		stderr *regexp.Regexp
	}{
		{"no retry", []string{"--retry-wait", "0"}, clicmd.ExitError, regexp.MustCompile(`^benchq submit: POST /v1/jobs: 429 Too many active jobs[^\n]*\n$`)},
		{"bound too short", []string{"--retry-wait", "5s"}, clicmd.ExitError, regexp.MustCompile(`429(.|\n)*gave up after waiting 0s; --retry-wait is 5s`)},
		{"waits it out", []string{"--retry-wait", "1m", "--wait"}, clicmd.ExitOK, regexp.MustCompile(`benchq submit: server answered 429 Too many active jobs; retrying in 10s(.|\n)*submitted`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := busy()
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"submit", "--ab", "-n 20 -c 1 " + tg.URL}, tt.args...), srv...)
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != tt.want {
				t.Fatalf("benchq %q = exit %d, want %d; stderr %s", args, got, tt.want, stderr.String())
			}
			if !tt.stderr.MatchString(stderr.String()) {
				t.Errorf("benchq %q stderr = %q, want a match for %s", args, stderr.String(), tt.stderr)
			}
			waitJob(t, m.URL(), b.ID, 30*time.Second)
		})
	}
}

// TestSubmitABKeepAlive: `--ab "-k …"` runs with keep-alive and the job
// shows no job-wide keepalive false beside the line.
func TestSubmitABKeepAlive(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	var stdout, stderr bytes.Buffer
	args := []string{"submit", "--ab", "-k -n 20 -c 1 " + tg.URL, "--server", m.URL()}
	if got := run(t.Context(), args, nil, &stdout, &stderr); got != clicmd.ExitOK {
		t.Fatalf("benchq %q = exit %d: %s", args, got, stderr.String())
	}
	id := strings.TrimSpace(stdout.String())
	waitJob(t, m.URL(), id, 30*time.Second)
	_, body := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+id+"/results", nil)
	if strings.Contains(string(body), `"keepalive":false`) || !strings.Contains(string(body), `"keep_alive":true,"keep_alive_requests":20`) {
		t.Errorf("results of an ab -k job = %s, want no keepalive false and 20 keep-alive requests", body)
	}
}

// TestRefusedTargetNamesTheSetting: a 422 for an address an allowlist
// entry would admit says which setting does; one no setting admits does
// not send the reader there.
func TestRefusedTargetNamesTheSetting(t *testing.T) {
	m := startMainWith(t, nil, func(m *Main) { m.Resolver = stagingResolver{} })
	tests := []struct {
		name string
		url  string
		hint bool
	}{
		{"private address", "http://10.0.0.1/", true},
		{"metadata address", "http://169.254.169.254/", true},
		{"gopher scheme", "gopher://127.0.0.1:70/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := call(t, http.MethodPost, m.URL()+"/v1/jobs", []byte(`{"targets":[{"url":"`+tt.url+`"}]}`))
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("POST = %d %s, want 422", resp.StatusCode, b)
			}
			if got := strings.Contains(string(b), "BENCHQ_ALLOW_TARGETS") && strings.Contains(string(b), "--allow-targets"); got != tt.hint {
				t.Errorf("422 = %s; names the allowlist setting %t, want %t", b, got, tt.hint)
			}
		})
	}
}

// TestKeysWithoutRedisURL: with no URL and no all-in-one socket in the
// data directory, keys says where it looked and why there may be none.
func TestKeysWithoutRedisURL(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		if k == "BENCHQ_DATA_DIR" {
			return dir
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	if got := clicmd.Keys(t.Context(), []string{"list"}, clicmd.Env{Getenv: env, Stdout: &stdout, Stderr: &stderr}); got == clicmd.KeysExitOK {
		t.Fatalf("keys list without a Redis = exit %d", got)
	}
	if !strings.Contains(stderr.String(), "no all-in-one redis-server socket") {
		t.Errorf("stderr = %q, want it to say no all-in-one socket was found", stderr.String())
	}
}

// TestHelpStyle: every subcommand's -h has the one layout ("usage:" with
// its synopsis, then its flags), but ab, whose help is ab's own.
func TestHelpStyle(t *testing.T) {
	for name := range subcommands() {
		if name == "ab" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			args := []string{name, "-h"}
			if name == "keys" {
				args = []string{name, "add", "-h"}
			}
			var stdout, stderr bytes.Buffer
			if got := run(t.Context(), args, nil, &stdout, &stderr); got != 0 {
				t.Errorf("benchq %q = exit %d, want 0", args, got)
			}
			help := stderr.String()
			if !strings.HasPrefix(help, "usage: benchq "+name) || !strings.Contains(help, "\n\nFlags:\n") {
				t.Errorf("benchq %q help = %q, want \"usage: benchq %s ...\" and a Flags: section", args, help, name)
			}
		})
	}
}
