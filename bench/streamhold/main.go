package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "benchq API base URL (loopback only)")
	jobID := flag.String("job", "", "the job whose event stream to open")
	n := flag.Int("n", 100, "streams to hold open")
	lifetime := flag.Duration("for", 10*time.Minute, "close every stream and exit after this long")
	flag.Parse()
	if err := run(*server, *jobID, *n, *lifetime); err != nil {
		log.Fatalf("streamhold: %v", err)
	}
}

func run(server, jobID string, n int, lifetime time.Duration) error {
	u, err := url.Parse(server)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return errors.New("-server must be a loopback address such as http://127.0.0.1:8080")
	}
	if jobID == "" || n < 1 {
		return errors.New("-job and a positive -n are needed")
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	ctx, stop := context.WithTimeout(ctx, lifetime)
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1}}
	var open, refused atomic.Int64
	var answered, held sync.WaitGroup
	for range n {
		answered.Add(1)
		held.Add(1)
		go func() {
			defer held.Done()
			resp, err := get(ctx, client, server+"/v1/jobs/"+url.PathEscape(jobID)+"/events")
			if err != nil || resp.StatusCode != http.StatusOK {
				refused.Add(1)
				answered.Done()
				if err == nil {
					resp.Body.Close()
				}
				return
			}
			open.Add(1)
			answered.Done()
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	answered.Wait()
	fmt.Printf("open %d refused %d\n", open.Load(), refused.Load())
	held.Wait()
	return nil
}

func get(ctx context.Context, client *http.Client, target string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("BENCHQ_API_KEY"))
	req.Header.Set("Accept", "text/event-stream")
	return client.Do(req)
}
