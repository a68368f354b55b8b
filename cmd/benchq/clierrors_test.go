package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// goPrefix finds a Go error chain's mark in a line the CLI printed: a
// lower-case word before ": " at the start or after another ": " (a
// package's prefix such as "client: ", "config: ", or a syscall's
// "connect: "), or a package-qualified function ("strconv.Atoi: ").
var goPrefix = regexp.MustCompile(`(^|: )[a-z][a-z0-9]*: |\b[a-z]+\.[A-Z]\w*: `)

// ownPrefix is the program's own name before a message, which is no Go
// package's: "benchq: ", "benchq submit: ", "benchq keys add: ", and ab's
// "ab: " the drop-in keeps.
var ownPrefix = regexp.MustCompile(`^(benchq( [a-z]+)*|ab): `)

// TestCLIErrorsAreSentences runs the built binary with bad input on every
// error path of the CLI (flags, files, an unreachable server or Redis, the
// service's problem+json answers, the ab drop-in, the service's own
// configuration) and checks that what it prints is a message for a
// person: no Go package or syscall prefix, no error chain.
func TestCLIErrorsAreSentences(t *testing.T) {
	bin := buildBenchq(t)
	m := startMain(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()
	closed := "http://" + closedAddr
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badJSON := file("bad.json", "{bad")
	invalid := file("invalid.json", `{"targets":[{"url":"http://127.0.0.1:1/"}],"sweep":{"concurrency":[0]}}`)
	unknownField := file("unknown.json", `{"targets":[{"url":"http://127.0.0.1:1/"}],"concurency":[1]}`)
	missing := filepath.Join(dir, "missing")
	srv := []string{"--server", m.URL()}

	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{"unknown command", []string{"sumbit"}, nil},
		{"submit: bad flag", []string{"submit", "--bogus"}, nil},
		{"submit: no spec", []string{"submit"}, nil},
		{"submit: missing file", []string{"submit", missing}, nil},
		{"submit: not JSON", []string{"submit", badJSON}, nil},
		{"submit: unknown --out format", []string{"submit", "--ab", "-n 1 http://127.0.0.1:1/", "--wait", "--out", "r.pdf"}, nil},
		{"submit: missing --key-file", []string{"submit", "--ab", "-n 1 http://127.0.0.1:1/", "--key-file", missing}, nil},
		{"submit: server URL", []string{"submit", "--ab", "-n 1 http://127.0.0.1:1/", "--server", "ftp://x"}, nil},
		{"submit: unreachable server", []string{"submit", "--ab", "-n 1 http://127.0.0.1:1/", "--server", closed}, nil},
		{"submit: invalid spec", append([]string{"submit", invalid}, srv...), nil},
		{"submit: unknown field", append([]string{"submit", unknownField}, srv...), nil},
		{"submit: refused scheme", append([]string{"submit", "--ab", "-n 1 gopher://127.0.0.1:70/"}, srv...), nil},
		{"get: unknown job", append([]string{"get", "job_missing"}, srv...), nil},
		{"get: unreachable server", []string{"get", "job_x", "--server", closed}, nil},
		{"cancel: unknown job", append([]string{"cancel", "job_missing"}, srv...), nil},
		{"wait: unknown job", append([]string{"wait", "job_missing"}, srv...), nil},
		{"wait: unreachable server", []string{"wait", "job_x", "--server", closed}, nil},
		{"list: bad status", append([]string{"list", "--status", "done"}, srv...), nil},
		{"list: bad label", append([]string{"list", "--label", "nocolon"}, srv...), nil},
		{"report: unknown job", append([]string{"report", "job_missing"}, srv...), nil},
		{"report: unknown format", append([]string{"report", "job_x", "--format", "pdf"}, srv...), nil},
		{"report: unreachable server", []string{"report", "job_x", "--server", closed}, nil},
		{"keys: unknown subcommand", []string{"keys", "frob"}, nil},
		{"keys: bad Redis URL", []string{"keys", "list", "--redis-url", "bogus://x"}, nil},
		{"keys: unreachable Redis", []string{"keys", "list", "--redis-url", "redis://" + closedAddr}, nil},
		{"healthcheck: unreachable", []string{"healthcheck", "--url", closed + "/healthz"}, nil},
		{"healthcheck: not a URL", []string{"healthcheck", "--url", "::bad"}, nil},
		{"version: argument", []string{"version", "extra"}, nil},
		{"help: unknown command", []string{"help", "sumbit"}, nil},
		{"ab: refused", []string{"ab", "-n", "1", closed + "/"}, nil},
		{"ab: missing body file", []string{"ab", "-n", "1", "-p", missing, closed + "/"}, nil},
		{"ab: missing CA file", []string{"ab", "-n", "1", "--cacert", missing, "https://" + closedAddr + "/"}, nil},
		{"ab: missing URL list", []string{"ab", "-n", "1", "--urls", missing, closed + "/"}, nil},
		{"ab: bad count", []string{"ab", "-n", "0", closed + "/"}, nil},
		{"ab: unreachable server", []string{"ab", "--server", closed, "-n", "1", closed + "/"}, nil},
		{"service: bad flag", []string{"--bogus"}, nil},
		{"service: bad log level", []string{"--log-level", "loud"}, nil},
		{"service: bad variable", nil, []string{"BENCHQ_WORKERS=x"}},
		{"serve: no Redis URL", []string{"serve"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tt.args...)
			cmd.Env = append(os.Environ(), "BENCHQ_SERVER=", "BENCHQ_API_KEY=", "BENCHQ_REDIS_URL=", "BENCHQ_DATA_DIR="+dir)
			cmd.Env = append(cmd.Env, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatalf("benchq %q succeeded, want an error", tt.args)
			}
			msg := messageLines(stderr.String())
			if len(msg) == 0 {
				t.Fatalf("benchq %q printed no message (%v)", tt.args, err)
			}
			for _, line := range msg {
				rest, detail := withoutServerDetail(ownPrefix.ReplaceAllString(line, ""))
				if p := goPrefix.FindString(rest); p != "" {
					t.Errorf("benchq %q prints a Go error chain (%q):\n%s", tt.args, p, line)
				}
				if p := goPrefix.FindString(detail); p != "" {
					t.Logf("benchq %q: the service's problem detail still has a Go prefix (%q): %s", tt.args, p, detail)
				}
			}
		})
	}
}

// messageLines are the lines of stderr that carry a message: all before
// the usage text a usage error prints, and those after it that start
// with the program's name (some commands print the usage first).
func messageLines(stderr string) []string {
	var lines []string
	inUsage := false
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "usage: ") || strings.HasPrefix(l, "Usage: ") {
			inUsage = true
		}
		if strings.TrimSpace(l) != "" && (!inUsage || ownPrefix.MatchString(l)) {
			lines = append(lines, l)
		}
	}
	return lines
}

// problemDetail is the detail of a problem+json answer as the CLI quotes
// it: "METHOD PATH: STATUS Title: detail (field f) [request id]".
var problemDetail = regexp.MustCompile(`^(.*: \d{3} [^:]+: )(.*?)((?: \(field [^)]*\))?(?: \[request \w+\])?)$`)

// withoutServerDetail cuts the detail the server wrote out of a line that
// quotes a problem+json answer: the CLI's own words around it are what
// this test checks; the service's words are checked by its own tests.
func withoutServerDetail(line string) (string, string) {
	m := problemDetail.FindStringSubmatch(line)
	if m == nil {
		return line, ""
	}
	return m[1] + "…" + m[3], m[2]
}
