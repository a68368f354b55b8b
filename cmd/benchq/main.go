// Command benchq is HTTP benchmarking as a service: with no subcommand it
// runs the API, one worker and an embedded Redis; `benchq serve` and
// `benchq worker` are the production halves; `benchq ab` is an ApacheBench
// drop-in on the same engine.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "--version" || args[0] == "-version" {
			return runVersion(args[1:], stdout, stderr)
		}
		if cmd, ok := subcommands()[args[0]]; ok {
			return cmd(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	return runService(ctx, args, os.Getenv, stdout, stderr)
}
