package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/config"
)

// subcommand is the entry point of one command of benchq's own: it gets
// the arguments after the command's name and returns the exit code.
type subcommand func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// subcommands are the commands run dispatches by name; any other command
// line is the service's (serve, worker or the all-in-one). Tests walk
// this table, so a new command's help is checked with the others'.
func subcommands() map[string]subcommand {
	return map[string]subcommand{
		"ab": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runAB(ctx, args, stdout, stderr)
		},
		"healthcheck": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runHealthcheck(ctx, args, stdout, stderr)
		},
		"report": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runReport(ctx, args, stdout, stderr)
		},
		"keys": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runKeys(ctx, args, stdout, stderr)
		},
		"submit": runSubmit,
		"wait":   runWait,
		"list": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return listMain(ctx, args, processEnv(nil, stdout, stderr))
		},
		"version": func(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runVersion(args, stdout, stderr)
		},
		"get": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runGet(ctx, args, stdout, stderr)
		},
		"cancel": func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runCancel(ctx, args, stdout, stderr)
		},
	}
}

// runService is `benchq [all|serve|worker]`: load the configuration, start
// the service, wait for a signal or a component failure, shut down.
func runService(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(args, getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(stdout, cfg.Command)
		if cfg.Command == config.CommandAll {
			commandsUsage(stdout)
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchq: %v\nRun 'benchq --help' for the flags.\n", err)
		return 2
	}
	logger := newLogger(cfg, stderr)
	// go-redis logs through a process-wide logger; a service process has
	// one logger, so this is set once, here.
	redis.SetLogger(redisClientLog{logger})
	m := NewMain(cfg, logger)
	if err := m.Run(ctx); err != nil {
		logger.Error("benchq: start failed", "err", err)
		_ = m.Close()
		return 1
	}
	code := 0
	select {
	case <-ctx.Done():
		logger.Info("benchq: shutting down", "timeout", cfg.ShutdownTimeout)
	case err := <-m.Failed():
		logger.Error("benchq: component failed", "err", err)
		code = 1
	}
	if err := m.Close(); err != nil {
		logger.Error("benchq: shutdown", "err", err)
		code = 1
	}
	return code
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
