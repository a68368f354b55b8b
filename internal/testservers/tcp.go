package testservers

import (
	"net"
	"sync"
	"testing"
)

// ServeTCP accepts connections on a free 127.0.0.1 port until the test
// ends, each served by serve in a goroutine of its own, and returns the
// port's address. When the test ends it closes the listener, then done
// (for a serve that waits on something else than its connection) and
// every connection still open, and waits for every serve to return. A
// connection is closed when its serve returns.
func ServeTCP(t testing.TB, serve func(c net.Conn, done <-chan struct{})) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testservers: listen: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = c.Close() }()
				serve(c, done)
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		close(done)
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
