package testservers

import (
	"bufio"
	"bytes"
	"net"
	"sync"
	"testing"
)

// Broken is a loopback TCP server that misbehaves the same way on every
// connection, for tests of what a benchmark of a broken target reports.
type Broken struct {
	URL string // http://127.0.0.1:port/

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  chan struct{}
}

// Resetting closes every connection it accepts with a TCP reset (SO_LINGER
// 0) before reading from it: every request fails on receive, or on write.
func Resetting(t testing.TB) *Broken {
	return startBroken(t, func(c net.Conn, _ <-chan struct{}) {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	})
}

// Answering reads each request's head, writes answer as is and closes the
// connection: a status line that is not HTTP, a header past any buffer, a
// body shorter than its Content-Length, a 503...
func Answering(t testing.TB, answer []byte) *Broken {
	return startBroken(t, func(c net.Conn, _ <-chan struct{}) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil || len(bytes.TrimRight(line, "\r\n")) == 0 {
				break // the blank line ending the head, or no more to read
			}
		}
		_, _ = c.Write(answer)
	})
}

// Silent accepts connections and never answers; they stay open until the
// test ends: every request times out.
func Silent(t testing.TB) *Broken {
	return startBroken(t, func(_ net.Conn, done <-chan struct{}) { <-done })
}

// OversizedHeader is an answer with one header n bytes long.
func OversizedHeader(n int) []byte {
	return append(append([]byte("HTTP/1.1 200 OK\r\nX-Big: "), bytes.Repeat([]byte("a"), n)...), "\r\nContent-Length: 0\r\n\r\n"...)
}

func startBroken(t testing.TB, serve func(c net.Conn, done <-chan struct{})) *Broken {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &Broken{URL: "http://" + ln.Addr().String() + "/", ln: ln, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	b.wg.Add(1)
	go b.accept(serve)
	t.Cleanup(b.close)
	return b
}

func (b *Broken) accept(serve func(net.Conn, <-chan struct{})) {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return // closed
		}
		b.mu.Lock()
		b.conns[c] = struct{}{}
		b.mu.Unlock()
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			serve(c, b.done)
			b.forget(c)
			_ = c.Close()
		}()
	}
}

func (b *Broken) forget(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
}

// close stops accepting, ends every connection and waits for the
// goroutines serving them.
func (b *Broken) close() {
	_ = b.ln.Close()
	close(b.done)
	b.mu.Lock()
	for c := range b.conns {
		_ = c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}
