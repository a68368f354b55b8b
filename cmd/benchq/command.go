package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/benchq/benchq/internal/config"
)

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
