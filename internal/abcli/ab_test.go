package abcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/testservers"
)

// fixedBody answers every request with body.
func fixedBody(body string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(body) }
}

// runABTest runs `benchq ab args...` in-process.
func runABTest(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(ctx, args, clicmd.Env{Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

const abBanner = "This is ApacheBench, Version 2.3 <$Revision$>\n" +
	"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n" +
	"Licensed to The Apache Software Foundation, http://www.apache.org/\n\n"

// heartbeat is what ab prints on stderr for n requests in steps of step.
func heartbeat(n, step int) string {
	var b strings.Builder
	for k := step; k <= n; k += step {
		fmt.Fprintf(&b, "Completed %d requests\n", k)
	}
	fmt.Fprintf(&b, "Finished %d requests\n", n)
	return b.String()
}

func TestABReportAndHeartbeat(t *testing.T) {
	tg := testservers.StartCounting(t, fixedBody(strings.Repeat("x", 1000)))
	tests := []struct {
		args       []string
		n          int
		wantStderr string
		wantLead   string // the end of the Benchmarking line and what follows
	}{
		{[]string{"-n", "300", "-c", "3"}, 300, heartbeat(300, 100), "(be patient)\n\n\nServer Software:"},
		{[]string{"-n", "2000", "-c", "10", "-k"}, 2000, heartbeat(2000, 200), "(be patient)\n\n\nServer Software:"},
		{[]string{"-n", "150", "-c", "5"}, 150, "", "(be patient).....done\n\n\nServer Software:"},
		{[]string{"-qn", "300", "-c", "3"}, 300, "", "(be patient).....done\n\n\nServer Software:"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runABTest(t, context.Background(), append(tt.args, tg.URL)...)
			if code != 0 {
				t.Fatalf("benchq ab %q exit = %d, want 0; stderr:\n%s", tt.args, code, stderr)
			}
			if stderr != tt.wantStderr {
				t.Errorf("benchq ab %q stderr =\n%s\nwant\n%s", tt.args, stderr, tt.wantStderr)
			}
			if !strings.HasPrefix(stdout, abBanner+"Benchmarking 127.0.0.1 "+tt.wantLead) {
				t.Errorf("benchq ab %q stdout starts\n%.400s\nwant banner then %q", tt.args, stdout, tt.wantLead)
			}
			for _, line := range []string{
				fmt.Sprintf("Complete requests:      %d\n", tt.n),
				"Failed requests:        0\n",
				"Document Length:        1000 bytes\n",
				fmt.Sprintf("HTML transferred:       %d bytes\n", 1000*tt.n),
				"Percentage of the requests served within a certain time (ms)\n",
			} {
				if !strings.Contains(stdout, line) {
					t.Errorf("benchq ab %q stdout has no line %q:\n%s", tt.args, line, stdout)
				}
			}
			if got := tg.ResetHits(); got != int64(tt.n) {
				t.Errorf("benchq ab %q sent %d requests, want %d", tt.args, got, tt.n)
			}
		})
	}
}

func TestABJSONAndHTTPLoad(t *testing.T) {
	tg := testservers.StartCounting(t, fixedBody("hello"))
	code, stdout, stderr := runABTest(t, context.Background(), "--json", "-n", "200", "-c", "4", tg.URL)
	if code != 0 {
		t.Fatalf("benchq ab --json exit = %d, want 0; stderr:\n%s", code, stderr)
	}
	var r abreport.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("benchq ab --json stdout is not JSON (%v):\n%s", err, stdout)
	}
	if r.CompleteRequests != 200 || r.DocumentLength != 5 || r.ConcurrencyLevel != 4 || r.StatusCodes[200] != 200 {
		t.Errorf("benchq ab --json: complete %d, length %d, c %d, 200s %d; want 200, 5, 4, 200",
			r.CompleteRequests, r.DocumentLength, r.ConcurrencyLevel, r.StatusCodes[200])
	}
	if stderr != heartbeat(200, 100) {
		t.Errorf("benchq ab --json stderr = %q, want the heartbeat", stderr)
	}
	code, stdout, _ = runABTest(t, context.Background(), "-q", "--format", "http_load", "-n", "50", tg.URL)
	if code != 0 || !strings.HasPrefix(stdout, "50 fetches, ") || !strings.Contains(stdout, "code 200 -- 50") {
		t.Errorf("benchq ab --format http_load = %d,\n%s\nwant 0 and http_load's summary of 50 fetches", code, stdout)
	}
}

// TestABMaxBody cuts bodies above --max-body: ab's breakdown line counts
// them as Exceptions, the JSON as body_too_large with its hint.
func TestABMaxBody(t *testing.T) {
	tg := testservers.StartCounting(t, fixedBody(strings.Repeat("x", 1000)))
	code, stdout, stderr := runABTest(t, context.Background(), "-q", "-k", "-n", "6", "--max-body", "999", tg.URL)
	if code != 0 {
		t.Fatalf("benchq ab --max-body exit = %d, want 0; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"Complete requests:      0\n",
		"Failed requests:        6\n   (Connect: 0, Receive: 0, Length: 0, Exceptions: 6)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("benchq ab --max-body 999 report lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runABTest(t, context.Background(), "--json", "-n", "3", "--max-body=999", tg.URL)
	var r abreport.Report
	if err := json.Unmarshal([]byte(stdout), &r); code != 0 || err != nil {
		t.Fatalf("benchq ab --json --max-body = %d, %v:\n%s", code, err, stdout)
	}
	if r.Failed.BodyTooLarge != 3 || r.FailedRequests != 3 || len(r.Hints) != 1 || !strings.HasPrefix(r.Hints[0], "body too large") {
		t.Errorf("benchq ab --json --max-body 999: body_too_large %d, failed %d, hints %q; want 3, 3, the body hint",
			r.Failed.BodyTooLarge, r.FailedRequests, r.Hints)
	}
	code, stdout, _ = runABTest(t, context.Background(), "-q", "-n", "3", "--max-body", "1000", tg.URL)
	if code != 0 || !strings.Contains(stdout, "Complete requests:      3\n") {
		t.Errorf("benchq ab --max-body 1000 (the body's length) = %d:\n%s\nwant 3 complete", code, stdout)
	}
}

func TestABFiles(t *testing.T) {
	var gotBody, gotType atomic.Value
	tg := testservers.StartCounting(t, func(ctx *fasthttp.RequestCtx) {
		gotBody.Store(string(ctx.PostBody()))
		gotType.Store(string(ctx.Request.Header.ContentType()))
		ctx.SetBodyString("ok")
	})
	dir := t.TempDir()
	post, csv, tsv, urls := filepath.Join(dir, "post.txt"), filepath.Join(dir, "p.csv"),
		filepath.Join(dir, "p.tsv"), filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(post, []byte("a=1&b=2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(urls, []byte(tg.URL+"a\n"+tg.URL+"b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runABTest(t, context.Background(), "-q", "-n", "40", "-c", "2",
		"-p", post, "-T", "application/x-www-form-urlencoded", "-e", csv, "-g", tsv, "--urls", urls)
	if code != 0 {
		t.Fatalf("benchq ab -p -e -g --urls exit = %d, want 0; stderr:\n%s", code, stderr)
	}
	if gotBody.Load() != "a=1&b=2" || gotType.Load() != "application/x-www-form-urlencoded" {
		t.Errorf("server got body %q type %q, want a=1&b=2 and the -T type", gotBody.Load(), gotType.Load())
	}
	if !strings.Contains(stdout, "Total body sent:        ") || !strings.Contains(stdout, " kb/s sent\n") {
		t.Errorf("benchq ab -p stdout lacks the sent lines:\n%s", stdout)
	}
	checkLines(t, csv, 102, "Percentage served,Time in ms")
	checkLines(t, tsv, 41, "starttime\tseconds\tctime\tdtime\tttime\twait")
}

// checkLines checks that file has n lines, the first one first.
func checkLines(t *testing.T, file string, n int, first string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != n || lines[0] != first {
		t.Errorf("%s has %d lines starting %q, want %d starting %q", filepath.Base(file), len(lines), lines[0], n, first)
	}
}

func TestABBadInput(t *testing.T) {
	const url = "http://127.0.0.1:1/"
	tests := []struct {
		args       []string
		code       int
		wantStderr string // its first line
		wantStdout string
	}{
		{[]string{"-c", "10", "-n", "5", url}, 22, "ab: Cannot use concurrency level greater than total number of requests", ""},
		{[]string{"-Q", url}, 22, "ab: illegal option -- Q", ""},
		{[]string{"http://127.0.0.1:1"}, 22, "ab: invalid URL", ""},
		{[]string{"-X", "127.0.0.1:3128", url}, 22, "ab: option -X is not supported by benchq", ""},
		{nil, 22, "ab: wrong number of arguments", ""},
		{[]string{"-h"}, 22, "Usage: benchq ab [options] [http[s]://]hostname[:port]/path", ""},
		{[]string{"-n", "0", url}, 1, "Invalid number of requests", ""},
		{[]string{"-i", "-p", "f", url}, 1, "Cannot mix POST with other methods", ""},
		{[]string{"-p", "/nonexistent/post.txt", url}, 1,
			"ab: Could not open POST data file (/nonexistent/post.txt): No such file or directory", ""},
		{[]string{"--urls", "/nonexistent/urls.txt"}, 1, "benchq ab: --urls: open /nonexistent/urls.txt: no such file or directory", ""},
		{[]string{"-V"}, 0, "", abBanner},
	}
	for _, tt := range tests {
		code, stdout, stderr := runABTest(t, context.Background(), tt.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != tt.code || first != tt.wantStderr || stdout != tt.wantStdout {
			t.Errorf("benchq ab %q = %d, stderr %q, stdout %q; want %d, %q, %q",
				tt.args, code, first, stdout, tt.code, tt.wantStderr, tt.wantStdout)
		}
		if tt.code == 22 && !strings.Contains(stderr, "\nUsage: benchq ab ") && tt.args != nil && tt.args[0] != "-h" {
			t.Errorf("benchq ab %q stderr has no usage:\n%s", tt.args, stderr)
		}
	}
}

func TestABConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	_ = ln.Close() // nothing listens there now
	code, stdout, stderr := runABTest(t, context.Background(), "-n", "10", url)
	if code != 111 || stderr != "apr_socket_recv: Connection refused (111)\n" ||
		stdout != abBanner+"Benchmarking 127.0.0.1 (be patient)..." {
		t.Errorf("benchq ab against a closed port = %d, stderr %q, stdout %q; want 111, ab's refusal, the banner",
			code, stderr, stdout)
	}
}

// TestABHTTPLoadSeveralURLs checks http_load's semantics over a URL file:
// byte counts are checked per URL (two documents of different sizes are not
// bad), and max parallel is what was observed, at most -c.
func TestABHTTPLoadSeveralURLs(t *testing.T) {
	tg := testservers.StartCounting(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/small" {
			ctx.SetBodyString(strings.Repeat("s", 100))
			return
		}
		ctx.SetBodyString(strings.Repeat("l", 2500))
	})
	urls := filepath.Join(t.TempDir(), "urls")
	if err := os.WriteFile(urls, []byte(tg.URL+"small\n"+tg.URL+"large\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runABTest(t, context.Background(), "-q", "--format", "http_load", "-n", "400", "-c", "4", "--urls", urls)
	var fetches, parallel int
	if _, err := fmt.Sscanf(stdout, "%d fetches, %d max parallel,", &fetches, &parallel); err != nil || code != 0 ||
		fetches != 400 || parallel < 1 || parallel > 4 ||
		strings.Contains(stdout, "bad byte counts") || !strings.Contains(stdout, "code 200 -- 400") {
		t.Errorf("benchq ab --format http_load --urls = %d, stderr %q,\n%s\nwant 0, 400 fetches, 1..4 max parallel, no bad byte counts",
			code, stderr, stdout)
	}
}

// TestABTLSToPlainPort sends https:// to a plain-HTTP server: ab's
// handshake failure, the cause named and the hints on stderr, a non-zero
// exit, no report.
func TestABTLSToPlainPort(t *testing.T) {
	tg := testservers.StartCounting(t, fixedBody("plain"))
	url := "https://" + strings.TrimPrefix(tg.URL, "http://")
	code, stdout, stderr := runABTest(t, context.Background(), "-n", "10", "-c", "2", url)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(lines) != 3 || lines[0] != "SSL handshake failed (1)." ||
		!strings.HasPrefix(lines[1], "benchq ab: not TLS: the server answered plain HTTP: tls: ") ||
		!strings.HasPrefix(lines[2], "benchq ab: tls handshake, not TLS: ") || !strings.Contains(lines[2], "use http://") {
		t.Errorf("benchq ab https:// to a plain port = %d, stderr:\n%s\nwant 1 and ab's SSL handshake failure, its cause, the hints", code, stderr)
	}
	if stdout != abBanner+"Benchmarking 127.0.0.1 (be patient)..." {
		t.Errorf("stdout = %q, want the banner and no report", stdout)
	}
	if tg.Hits() != 0 {
		t.Errorf("the server answered %d requests, want none", tg.Hits())
	}
}

func TestABInterrupted(t *testing.T) {
	tg := testservers.StartCounting(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(20 * time.Millisecond)
		ctx.SetBodyString("slow")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	code, stdout, stderr := runABTest(t, ctx, "-n", "100000", "-c", "2", tg.URL)
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("benchq ab took %v after the cancel, want it to stop within a second", elapsed)
	}
	if code != 1 {
		t.Errorf("benchq ab interrupted exit = %d, want 1 as ab on SIGINT", code)
	}
	if strings.Contains(stderr, "Finished") || !strings.Contains(stdout, "(be patient)\n\n\nServer Software:") ||
		!strings.Contains(stdout, "Complete requests:") {
		t.Errorf("benchq ab interrupted: stderr %q, stdout\n%s\nwant the partial report and no Finished line", stderr, stdout)
	}
}
