package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	lifetime := flag.Duration("for", 10*time.Minute, "stop serving after this long")
	bound := flag.Int64("bound", 64<<30, "bytes of body at most per response")
	flag.Parse()
	if err := serve(*lifetime, *bound); err != nil {
		log.Fatalf("endless: %v", err)
	}
}

func serve(lifetime time.Duration, bound int64) error {
	// Loopback only: the bench scripts never load anything else.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Println(ln.Addr().String())
	chunk := make([]byte, 64<<10)
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// No Content-Length and a flush per chunk: net/http sends
			// the body chunked, one chunk per write.
			w.Header().Set("Content-Type", "application/octet-stream")
			rc := http.NewResponseController(w)
			for sent := int64(0); sent < bound; sent += int64(len(chunk)) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				if err := rc.Flush(); err != nil {
					return
				}
			}
		}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), lifetime)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		fmt.Fprintln(os.Stderr, "endless: lifetime over, stopped")
	}
	return nil
}
