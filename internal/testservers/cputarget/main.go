// Command cputarget is a test target whose CPU the tests know: a Go HTTP
// server on 127.0.0.1 whose /work burns CPU per request (a SHA-256 chain
// of ?rounds=N, default 20000), /sleep waits ?ms=N milliseconds, /hello
// answers at once, and /metrics exposes client_golang's process and Go
// collectors (process_cpu_seconds_total, process_resident_memory_bytes,
// go_sched_gomaxprocs_threads). It prints "listening on ADDR" once it
// serves. testservers.StartCPUTarget builds and runs it, pinned with
// taskset, as a process of its own so /proc/PID/stat tells what it used.
package main

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		rounds, err := strconv.Atoi(r.URL.Query().Get("rounds"))
		if err != nil || rounds <= 0 || rounds > 10_000_000 {
			rounds = 20000
		}
		sum := sha256.Sum256([]byte(r.URL.Path))
		for range rounds {
			sum = sha256.Sum256(sum[:])
		}
		fmt.Fprintf(w, "%x\n", sum[:4])
	})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 || ms > 10_000 {
			ms = 10
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		fmt.Fprintln(w, "slept")
	})
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })
	mux.Handle("/metrics", promhttp.Handler())
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
