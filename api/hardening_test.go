package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/testservers"
)

// countingListener counts every byte the server reads from its
// connections, so a test can tell "refused" from "read whole, then refused".
type countingListener struct {
	net.Listener
	read atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.read}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// servedEnv is the API on a real http.Server (its timeouts and limits are
// what these tests check; httptest with Handler() would bypass them).
type servedEnv struct {
	addr string
	ln   *countingListener
	logs *logbuf.Buffer
}

func serveAPI(t *testing.T, tune func(*Config)) *servedEnv {
	t.Helper()
	logs := &logbuf.Buffer{}
	cfg := Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if tune != nil {
		tune(&cfg)
	}
	srv := New(cfg, Deps{Store: newFakeStore(), Queue: &jobtest.Queue{}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: l}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &servedEnv{addr: l.Addr().String(), ln: ln, logs: logs}
}

// waitClosed reads from conn until the server closes it or limit passes,
// and reports how long that took.
func waitClosed(t *testing.T, conn net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := conn.SetReadDeadline(start.Add(limit)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open after %s", limit)
	}
	return time.Since(start)
}

// TestSlowlorisIsCut: a client dribbling its headers one byte a second
// is disconnected by ReadHeaderTimeout long before it completes a request.
func TestSlowlorisIsCut(t *testing.T) {
	const headerTimeout = 500 * time.Millisecond
	env := serveAPI(t, func(c *Config) { c.ReadHeaderTimeout = headerTimeout })
	request := "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\nX-Padding: aaaaaaaaaaaaaaaa\r\n\r\n"
	conn, err := net.Dial("tcp", env.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	var sent atomic.Int64
	stop := make(chan struct{})
	dribbled := make(chan struct{})
	go func() {
		defer close(dribbled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; i < len(request); i++ {
			if _, err := conn.Write([]byte{request[i]}); err != nil {
				return
			}
			sent.Add(1)
			select {
			case <-tick.C:
			case <-stop:
				return
			}
		}
	}()
	took := waitClosed(t, conn, 10*time.Second)
	close(stop)
	<-dribbled
	if took > headerTimeout+3*time.Second {
		t.Errorf("server closed the connection after %s, want about ReadHeaderTimeout (%s)", took, headerTimeout)
	}
	if n := sent.Load(); n > 3 || n >= int64(len(request)) {
		t.Errorf("client sent %d of the request's %d bytes before the cut, want at most 3", n, len(request))
	}
}

// TestSlowBodyIsCut: headers at once, then the body dribbled: ReadTimeout
// bounds the whole request.
func TestSlowBodyIsCut(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	env := serveAPI(t, func(c *Config) { c.ReadTimeout = readTimeout })
	conn, err := net.Dial("tcp", env.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	stop := make(chan struct{})
	dribbled := make(chan struct{})
	go func() {
		defer close(dribbled)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			case <-stop:
				return
			}
		}
	}()
	took := waitClosed(t, conn, 10*time.Second)
	close(stop)
	<-dribbled
	if took > readTimeout+3*time.Second {
		t.Errorf("server closed the connection after %s, want about ReadTimeout (%s)", took, readTimeout)
	}
}

// TestHugeBodyRefusedUnread: a 10 MB POST /v1/jobs gets 413 after the
// server read about the 1 MiB limit, not the 10 MB.
func TestHugeBodyRefusedUnread(t *testing.T) {
	const limit = 1 << 20
	env := serveAPI(t, nil) // MaxBody default: 1 MiB
	conn, err := net.Dial("tcp", env.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 10 << 20
	go func() {
		// The server stops reading and closes; the writes then fail, which
		// is the point.
		fmt.Fprintf(conn, "POST /v1/jobs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", env.addr, size)
		_, _ = io.Copy(conn, io.MultiReader(strings.NewReader(`{"name":"`), io.LimitReader(repeatReader('a'), size-9)))
	}()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "body-too-large") {
		t.Fatalf("10 MB body = %d %s, want 413 body-too-large", resp.StatusCode, body)
	}
	// Let the server finish with the connection before counting.
	waitClosed(t, conn, 10*time.Second)
	if read := env.ln.read.Load(); read > limit+64<<10 {
		t.Errorf("server read %d bytes of a %d-byte request, want about the %d-byte limit", read, size, limit)
	} else {
		t.Logf("server read %d bytes of a %d-byte request (limit %d)", read, size, limit)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestSecretsNotEchoed: a spec carrying a target's credentials that fails
// validation (in the credentials' own field, or elsewhere) answers
// without them, and logs nothing of them either.
func TestSecretsNotEchoed(t *testing.T) {
	const secret = "s3cret"
	env := serveAPI(t, nil)
	url := "http://" + env.addr
	specs := map[string]string{
		"other field invalid": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/"}],
			"request":{"headers":{"Authorization":"Bearer s3cret"}},"sweep":{"concurrency":[0]}}`,
		"header value invalid": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/"}],
			"request":{"headers":{"Authorization":"Bearer s3cret\r\nX-Evil: 1"}}}`,
		"per-target header": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/",
			"request":{"method":"FETCH","headers":{"Authorization":"Bearer s3cret"}}}]}`,
		"ab -H, bad flag":                 `{"targets":[{"name":"a","ab":"-H 'Authorization: Bearer s3cret' -n 0 http://127.0.0.1:1/"}]}`,
		"ab -H, refused URL":              `{"targets":[{"name":"a","ab":"-H 'Authorization: Bearer s3cret' -n 10 http://10.0.0.1/"}]}`,
		"ab -A basic auth":                `{"targets":[{"name":"a","ab":"-A user:s3cret -n 0 http://127.0.0.1:1/"}]}`,
		"URL userinfo, refused":           `{"targets":[{"name":"a","url":"http://user:s3cret@10.0.0.1/"}]}`,
		"URL userinfo, bad port":          `{"targets":[{"name":"a","url":"http://user:s3cret@127.0.0.1:99999/"}]}`,
		"URL userinfo, no host":           `{"targets":[{"name":"a","url":"http://user:s3cret@/x"}]}`,
		"URL userinfo, unparsable":        `{"targets":[{"name":"a","url":"http://user:s3cret@127.0.0.1:8o/"}]}`,
		"ab URL userinfo, unparsable":     `{"targets":[{"name":"a","ab":"-n 10 http://user:s3cret@127.0.0.1:8o/"}]}`,
		"http_load URL userinfo, no host": `{"targets":[{"name":"a","http_load":"-parallel 1 -fetches 10","urls":["http://user:s3cret@/x"]}]}`,
		"webhook userinfo, no host": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/"}],
			"webhook":{"url":"http://user:s3cret@/hook"}}`,
		"webhook userinfo, refused": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/"}],
			"webhook":{"url":"http://user:s3cret@10.0.0.1/hook"}}`,
		"unknown field next to it": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/"}],
			"request":{"headers":{"Authorization":"Bearer s3cret"},"bogus":1}}`,
		"wrong type": `{"targets":[{"name":"a","url":"http://127.0.0.1:1/"}],
			"request":{"headers":{"Authorization":["Bearer s3cret"]}}}`,
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			resp, err := http.Post(url+"/v1/jobs", "application/json", strings.NewReader(spec))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Fatalf("POST = %d %s, want a 4xx problem", resp.StatusCode, body)
			}
			if strings.Contains(string(body), secret) {
				t.Errorf("problem echoes the secret: %s", body)
			}
		})
	}
	if logs := env.logs.String(); strings.Contains(logs, secret) {
		t.Errorf("logs contain the secret:\n%s", logs)
	}
}

// TestRequestIDsInLogs: each request's log line carries the id the
// client sees in X-Request-Id.
func TestRequestIDsInLogs(t *testing.T) {
	env := serveAPI(t, nil)
	var ids []string
	for _, path := range []string{"/healthz", "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV", "/v1/nowhere"} {
		resp, err := http.Get("http://" + env.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		if id == "" {
			t.Fatalf("GET %s: no X-Request-Id header", path)
		}
		ids = append(ids, id)
	}
	logs := env.logs.String()
	for i, id := range ids {
		re := regexp.MustCompile(`(?m)^.*request_id=` + regexp.QuoteMeta(id) + `.*$`)
		line := re.FindString(logs)
		if line == "" || !strings.Contains(line, "http request") {
			t.Errorf("request %d (id %s) has no request log line with its id:\n%s", i, id, logs)
		}
	}
}
