package clicmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/benchq/benchq/internal/client"
)

const healthcheckSynopsis = `benchq healthcheck [--url URL] [--timeout D]

A container probe for images without a shell or curl: exits 0 when the URL
answers 200, 1 when it does not, 2 on a usage error.`

// healthcheckFlags parses `benchq healthcheck`'s flags; the compose test
// uses it to check the file's healthcheck command.
func healthcheckFlags(args []string, out io.Writer) (url string, timeout time.Duration, err error) {
	fs := NewFlagSet("benchq healthcheck", healthcheckSynopsis, out)
	fs.StringVar(&url, "url", "http://127.0.0.1:8080/healthz", "URL that must answer 200")
	fs.DurationVar(&timeout, "timeout", 2*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return "", 0, err
	}
	if fs.NArg() > 0 {
		return "", 0, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return url, timeout, nil
}

// Healthcheck is `benchq healthcheck`: a container probe for images with
// no shell or curl (distroless). Exit 0 when the URL answers 200.
func Healthcheck(ctx context.Context, args []string, env Env) int {
	stdout, stderr := env.Stdout, env.Stderr
	url, timeout, err := healthcheckFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "benchq healthcheck: --url %q is not a URL\n", url)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "benchq healthcheck: %s: %s\n", url, client.Reason(err))
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "benchq healthcheck: %s answered %s\n", url, resp.Status)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
