// Command benchq is HTTP benchmarking as a service: with no subcommand it
// runs the API, one worker and an embedded Redis; `benchq serve` and
// `benchq worker` are the production halves; the client commands
// (internal/clicmd) talk to a running service; `benchq ab` (internal/abcli)
// is an ApacheBench drop-in on the same engine. This package is the wiring
// and the command table (command.go).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/redis/go-redis/v9"
	"golang.org/x/term"
)

func main() {
	// go-redis logs its dial retries through a process-wide logger, which
	// writes to stderr by default; a client command (keys) says what
	// failed in its own words, and the service sets its own (runService).
	redis.SetLogger(redisClientLog{slog.New(slog.DiscardHandler)})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		name := args[0]
		if name == "--version" || name == "-version" {
			name = "version"
		}
		if cmd, ok := subcommands()[name]; ok {
			return cmd(ctx, args[1:], processEnv(stdin, stdout, stderr))
		}
		// The service takes no argument but a flag or its command's
		// name: anything else is a command mistyped.
		if !strings.HasPrefix(name, "-") && !config.IsCommand(name) {
			fmt.Fprintln(stderr, "benchq: "+unknownCommand(name))
			return 2
		}
	}
	return runService(ctx, args, os.Getenv, stdout, stderr)
}

// processEnv is what a command takes from the process: its environment,
// the given streams, and whether stderr is a terminal.
func processEnv(stdin io.Reader, stdout, stderr io.Writer) clicmd.Env {
	return clicmd.Env{Getenv: os.Getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, TTY: isTerminal(stderr)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
