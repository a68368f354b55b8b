package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// TestHTTP10RequestBytes checks the HTTP/1.0 request against the bytes ab
// 2.3 writes for the same options.
func TestHTTP10RequestBytes(t *testing.T) {
	const ab = "ApacheBench/2.3"
	tests := []struct {
		name string
		url  string
		plan measure.Plan
		want string
	}{
		{
			"plain GET", "http://127.0.0.1:8080/a?b=1",
			measure.Plan{},
			"GET /a?b=1 HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
		},
		{
			"default port and keep-alive", "http://localhost/",
			measure.Plan{KeepAlive: true},
			"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: localhost\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
		},
		{
			"https default port, IPv6", "https://[::1]/x",
			measure.Plan{},
			"GET /x HTTP/1.0\r\nHost: [::1]\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
		},
		{
			"https port 80 is not its default", "https://127.0.0.1:80/",
			measure.Plan{Method: "HEAD"},
			"HEAD / HTTP/1.0\r\nHost: 127.0.0.1:80\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
		},
		{
			"POST with -C -A -T and -H", "http://127.0.0.1:81/post",
			measure.Plan{
				KeepAlive: true, Body: []byte("a=1\n"), ContentType: "application/x-www-form-urlencoded",
				Headers: []measure.Header{
					{Key: "Cookie", Value: "s=1"}, {Key: "Authorization", Value: "Basic dTpw"}, {Key: "X-One", Value: "1"}, {Key: "X-Two", Value: "2"},
				},
				LeadingHeaders: 2,
			},
			"POST /post HTTP/1.0\r\nConnection: Keep-Alive\r\nCookie: s=1\r\nAuthorization: Basic dTpw\r\n" +
				"Content-length: 4\r\nContent-type: application/x-www-form-urlencoded\r\n" +
				"X-One: 1\r\nX-Two: 2\r\nHost: 127.0.0.1:81\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\na=1\n",
		},
		{
			"given Host, User-Agent and Accept replace ab's", "http://127.0.0.1:8080/",
			measure.Plan{Method: "PUT", Body: []byte("x"), Headers: []measure.Header{
				{Key: "accept", Value: "text/html"}, {Key: "Host", Value: "example.test"}, {Key: "user-agent", Value: "me"},
			}},
			"PUT / HTTP/1.0\r\nContent-length: 1\r\nContent-type: text/plain\r\n" +
				"accept: text/html\r\nHost: example.test\r\nuser-agent: me\r\n\r\nx",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plan
			p.URLs, p.Requests, p.HTTPVersion, p.UserAgent = []string{tt.url}, 1, measure.HTTP10, ab
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			tg, err := buildTarget(p.WithDefaults(), tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(tg.req); got != tt.want {
				t.Errorf("request:\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestHTTP11RequestUnchanged(t *testing.T) {
	p := measure.Plan{URLs: []string{"http://127.0.0.1:8080/a"}, Requests: 1}.WithDefaults()
	tg, err := buildTarget(p, p.URLs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := "GET /a HTTP/1.1\r\nUser-Agent: benchq\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
	if got := string(tg.req); got != want {
		t.Errorf("request:\n%q\nwant\n%q", got, want)
	}
}

func TestValidateHTTPVersion(t *testing.T) {
	p := measure.Plan{URLs: []string{"http://127.0.0.1:8080/"}, Requests: 1, HTTPVersion: "3"}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "http_version") {
		t.Errorf("Validate(HTTPVersion 3) = %v, want an error naming http_version", err)
	}
	p.HTTPVersion, p.LeadingHeaders = measure.HTTP10, 1
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "leading_headers") {
		t.Errorf("Validate(LeadingHeaders 1 of 0) = %v, want an error naming leading_headers", err)
	}
}

// rawServer answers each request on a connection with answer(i), i
// counting requests across connections, and closes the connection after
// answers for which closeAfter(i) is true. It records every request and
// counts the bytes it wrote.
type rawServer struct {
	addr string

	mu      sync.Mutex
	reqs    []string
	conns   int
	read    int64
	written int64
}

func startRawServer(t *testing.T, answer func(i int) (resp string, closeAfter bool)) *rawServer {
	t.Helper()
	return startRawWriter(t, func(i int, w io.Writer) bool {
		resp, closeAfter := answer(i)
		_, err := io.WriteString(w, resp)
		return err != nil || closeAfter
	})
}

// startRawWriter is startRawServer for answers written as they go (large,
// endless or cut short): answer writes response i to w and reports
// whether to close the connection after it.
func startRawWriter(t *testing.T, answer func(i int, w io.Writer) (closeAfter bool)) *rawServer {
	t.Helper()
	s := &rawServer{}
	s.addr = testservers.ServeTCP(t, func(c net.Conn, _ <-chan struct{}) {
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		br := bufio.NewReader(c)
		w := &rawCounter{w: c, s: s}
		for {
			req, err := readRawRequest(br)
			if err != nil {
				return
			}
			s.mu.Lock()
			i := len(s.reqs)
			s.reqs = append(s.reqs, req)
			s.read += int64(len(req))
			s.mu.Unlock()
			if answer(i, w) {
				return
			}
		}
	})
	return s
}

// rawCounter counts what a rawServer writes.
type rawCounter struct {
	w io.Writer
	s *rawServer
}

func (c *rawCounter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.s.mu.Lock()
	c.s.written += int64(n)
	c.s.mu.Unlock()
	return n, err
}

// readRawRequest reads one request: its header block and a Content-length
// body, whatever the spelling of the header.
func readRawRequest(br *bufio.Reader) (string, error) {
	var b strings.Builder
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		b.WriteString(line)
		if k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ": "); ok && strings.EqualFold(k, "Content-Length") {
			n, _ = strconv.Atoi(v)
		}
		if line == "\r\n" {
			break
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return "", err
	}
	b.Write(body)
	return b.String(), nil
}

// TestHTTP10Answers runs HTTP/1.0 plans against HTTP/1.0 answers: one with
// no Content-Length is read to the server's close, as ab reads it; with
// keep-alive a "Connection: keep-alive" answer keeps the connection, and
// one without it is read to the close and the next request reconnects.
func TestHTTP10Answers(t *testing.T) {
	const body = "hello, ab\n"
	tests := []struct {
		name      string
		keepAlive bool
		resp      string
		close     bool
		wantConns int
		wantKA    int64
	}{
		{"no length, read to close", false,
			"HTTP/1.0 200 OK\r\nServer: raw\r\n\r\n" + body, true, 4, 0},
		{"keep-alive kept", true,
			"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 10\r\n\r\n" + body, false, 1, 4},
		{"keep-alive refused by the answer", true,
			"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n" + body, true, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startRawServer(t, func(int) (string, bool) { return tt.resp, tt.close })
			url := "http://" + s.addr + "/"
			m := run(t, measure.Plan{URLs: []string{url}, Requests: 4, KeepAlive: tt.keepAlive,
				HTTPVersion: measure.HTTP10, UserAgent: "ab"})
			checkEq(t, "Complete", m.Complete, 4)
			checkEq(t, "Failed", m.Failed, 0)
			checkEq(t, "KeepAliveRequests", m.KeepAliveRequests, tt.wantKA)
			checkEq(t, "BodyReceivedBytes", m.BodyReceivedBytes, int64(4*len(body)))
			checkEq(t, "TotalReceivedBytes", m.TotalReceivedBytes, int64(4*len(tt.resp)))
			s.mu.Lock()
			defer s.mu.Unlock()
			checkEq(t, "connections", s.conns, tt.wantConns)
			checkEq(t, "TotalSentBytes", m.TotalSentBytes, s.read)
			ka := ""
			if tt.keepAlive {
				ka = "Connection: Keep-Alive\r\n"
			}
			want := fmt.Sprintf("GET / HTTP/1.0\r\n%sHost: %s\r\nUser-Agent: ab\r\nAccept: */*\r\n\r\n", ka, s.addr)
			for i, r := range s.reqs {
				if !bytes.Equal([]byte(r), []byte(want)) {
					t.Errorf("request %d = %q, want %q", i, r, want)
				}
			}
		})
	}
}
