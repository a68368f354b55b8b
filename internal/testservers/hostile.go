package testservers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
)

// Hostile is a loopback HTTP/1.x server that misbehaves in one way on
// every connection, written on raw TCP so that the misbehaviour is exactly
// what the test names and the server itself holds no body in memory.
type Hostile struct {
	URL      string // http://127.0.0.1:PORT/
	Addr     string
	accepted atomic.Int64
	requests atomic.Int64
	written  atomic.Int64
}

// Accepted is how many connections the server accepted.
func (h *Hostile) Accepted() int64 { return h.accepted.Load() }

// Requests is how many request heads the server read in full.
func (h *Hostile) Requests() int64 { return h.requests.Load() }

// Written is how many bytes the server wrote.
func (h *Hostile) Written() int64 { return h.written.Load() }

// Behaviour is what a Hostile server does with one connection: it is
// called after the request head has been read (unless the behaviour reads
// nothing, see ResetOnAccept) and returns when the connection may close.
type Behaviour struct {
	name    string
	noRead  bool // act on accept, before reading a request
	respond func(w io.Writer, done <-chan struct{}) error
	reset   bool // close with SO_LINGER 0: the client sees ECONNRESET
}

// String names the behaviour for subtests.
func (b Behaviour) String() string { return b.name }

// HugeBody answers every request with a Content-Length body of size
// bytes, streamed from a small buffer.
func HugeBody(size int64) Behaviour {
	return Behaviour{name: "huge-body-" + strconv.FormatInt(size, 10), respond: func(w io.Writer, _ <-chan struct{}) error {
		if _, err := fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", size); err != nil {
			return err
		}
		return writeFill(w, size)
	}}
}

// EndlessChunked answers with a chunked body that never ends; the server
// stops when the client closes the connection.
func EndlessChunked() Behaviour {
	return Behaviour{name: "endless-chunked", respond: func(w io.Writer, _ <-chan struct{}) error {
		if _, err := io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"); err != nil {
			return err
		}
		chunk := append([]byte("8000\r\n"), bytes.Repeat([]byte{'x'}, 0x8000)...)
		chunk = append(chunk, "\r\n"...)
		for {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
	}}
}

// GarbageStatus answers with a status line that is not HTTP.
func GarbageStatus() Behaviour {
	return Behaviour{name: "garbage-status", respond: func(w io.Writer, _ <-chan struct{}) error {
		_, err := io.WriteString(w, "SPDY/9 what is this\r\n\r\n")
		return err
	}}
}

// ResetOnAccept resets every connection as soon as it is accepted.
func ResetOnAccept() Behaviour {
	return Behaviour{name: "reset-on-accept", noRead: true, reset: true, respond: func(io.Writer, <-chan struct{}) error { return nil }}
}

// HeaderFlood answers with a status line followed by headers that never
// end (bounded at 64 MiB so that a client without a limit still stops).
func HeaderFlood() Behaviour {
	return Behaviour{name: "header-flood", respond: func(w io.Writer, _ <-chan struct{}) error {
		if _, err := io.WriteString(w, "HTTP/1.1 200 OK\r\n"); err != nil {
			return err
		}
		line := []byte("X-Flood: " + string(bytes.Repeat([]byte{'f'}, 1000)) + "\r\n")
		for n := 0; n < 64<<20; n += len(line) {
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		return nil
	}}
}

// ShortBody promises a Content-Length body of promised bytes, sends sent
// bytes of it and closes the connection.
func ShortBody(promised, sent int64) Behaviour {
	return Behaviour{name: "short-body", respond: func(w io.Writer, _ <-chan struct{}) error {
		if _, err := fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", promised); err != nil {
			return err
		}
		return writeFill(w, sent)
	}}
}

// Answer reads each request head and writes raw as is, then closes: a
// status line that is not HTTP, a 503, a body shorter than promised...
func Answer(name string, raw []byte) Behaviour {
	return Behaviour{name: name, respond: func(w io.Writer, _ <-chan struct{}) error {
		_, err := w.Write(raw)
		return err
	}}
}

// Silent reads the request and never answers; the connection stays open
// until the test ends, so every request times out.
func Silent() Behaviour {
	return Behaviour{name: "silent", respond: func(_ io.Writer, done <-chan struct{}) error {
		<-done
		return nil
	}}
}

// StartHostile serves b on a free 127.0.0.1 port until the test ends.
func StartHostile(t testing.TB, b Behaviour) *Hostile {
	t.Helper()
	h := &Hostile{}
	h.Addr = ServeTCP(t, func(c net.Conn, done <-chan struct{}) {
		h.accepted.Add(1)
		h.serve(c, b, done)
	})
	h.URL = "http://" + h.Addr + "/"
	return h
}

func (h *Hostile) serve(c net.Conn, b Behaviour, done <-chan struct{}) {
	defer func() {
		if tc, ok := c.(*net.TCPConn); ok && b.reset {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}()
	if !b.noRead {
		if !readHead(bufio.NewReader(c)) {
			return
		}
		h.requests.Add(1)
	}
	_ = b.respond(&countingWriter{w: c, n: &h.written}, done)
}

// readHead reads one request head (to its blank line); the hostile
// behaviours answer requests without bodies only.
func readHead(r *bufio.Reader) bool {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return true
		}
	}
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// writeFill writes n filler bytes from a 64 KiB buffer.
func writeFill(w io.Writer, n int64) error {
	buf := bytes.Repeat([]byte{'b'}, 64<<10)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
