package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("arrivals: usage: arrivals serve -out FILE | arrivals lag -rate R FILE")
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serveCmd(os.Args[2:])
	case "lag":
		err = lagCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: serve or lag", os.Args[1])
	}
	if err != nil {
		log.Fatalf("arrivals: %v", err)
	}
}

// book keeps arrival times, lock-free: each request takes the next slot.
type book struct {
	base time.Time
	at   []int64
	n    atomic.Int64
}

func (b *book) note() {
	if i := b.n.Add(1) - 1; i < int64(len(b.at)) {
		b.at[i] = int64(time.Since(b.base))
	}
}

func serveCmd(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	out := fs.String("out", "", "file the arrivals are written to")
	lifetime := fs.Duration("for", 10*time.Minute, "stop serving after this long")
	most := fs.Int("max", 5_000_000, "arrivals kept at most")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *most <= 0 {
		return errors.New("serve needs -out FILE and a positive -max")
	}
	// Loopback only: the bench scripts never load anything else.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	b := &book{base: time.Now(), at: make([]int64, *most)}
	body := []byte("ok")
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			b.note()
			ctx.SetBody(body)
		},
		ReadTimeout: time.Minute,
	}
	fmt.Println(ln.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	if err := srv.Serve(ln); err != nil && ctx.Err() == nil {
		return fmt.Errorf("serve: %w", err)
	}
	return write(*out, b.at[:min(b.n.Load(), int64(len(b.at)))])
}

func write(path string, at []int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, v := range at {
		w.WriteString(strconv.FormatInt(v, 10))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func lagCmd(args []string) error {
	fs := flag.NewFlagSet("lag", flag.ContinueOnError)
	rate := fs.Float64("rate", 0, "the schedule's starts per second")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate <= 0 || fs.NArg() != 1 {
		return errors.New("lag needs -rate R > 0 and one FILE")
	}
	at, err := read(fs.Arg(0))
	if err != nil {
		return err
	}
	if len(at) == 0 {
		return errors.New("no arrivals")
	}
	errs := sendErrors(at, *rate)
	fmt.Printf("%d %.1f %.1f %.1f\n", len(errs), quantile(errs, 0.5), quantile(errs, 0.99), errs[len(errs)-1])
	return nil
}

func read(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var at []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		at = append(at, v)
	}
	return at, sc.Err()
}

// sendErrors matches the k-th arrival with the k-th slot of the schedule
// and returns each arrival's lateness past the best-timed one, in µs,
// sorted.
func sendErrors(at []int64, rate float64) []float64 {
	slices.Sort(at)
	period := 1e9 / rate
	off := make([]float64, len(at))
	least := math.Inf(1)
	for k, t := range at {
		off[k] = float64(t-at[0]) - float64(k)*period
		least = math.Min(least, off[k])
	}
	for k := range off {
		off[k] = (off[k] - least) / 1e3
	}
	slices.Sort(off)
	return off
}

// quantile is the sorted values' q-quantile, nearest rank.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(len(sorted)-1, i))]
}
