package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/abcli"
	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
)

// subcommand is the entry point of one command of benchq's own: it gets
// the arguments after the command's name and returns the exit code.
type subcommand func(ctx context.Context, args []string, env clicmd.Env) int

// command is one row of benchq's command table. Dispatch, `benchq
// --help`, `benchq help` and the suggestion for a mistyped name all read
// the table, so a command cannot be runnable yet missing from the help.
type command struct {
	name    string
	usage   string // one line: how the command is called
	summary string // one line: what it is for
	// run is the command; nil for the service's commands (all, serve, worker),
	// which runService reads from the whole command line.
	run subcommand
}

// commands is the command table, in the order the help lists it.
func commands() []command {
	return []command{
		{name: "all", usage: "benchq [all] [flags]", summary: "the API, one worker and, without --redis-url, its own Redis: what benchq runs with no command"},
		{name: "serve", usage: "benchq serve [flags]", summary: "run the API only, against a shared Redis (--redis-url)"},
		{name: "worker", usage: "benchq worker [flags]", summary: "run a worker only, against a shared Redis (--redis-url)"},
		{name: "submit", usage: `benchq submit [job.json | -] [--ab "-n 1000 -c 10 URL"] [--wait] [--out FILE]... [flags]`,
			summary: "submit a job; with --wait follow it and exit with its outcome", run: clicmd.Submit},
		{name: "wait", usage: "benchq wait JOB_ID [--out FILE]... [--timeout D] [--quiet] [flags]",
			summary: "re-attach to a job: follow it as submit --wait does, with the same exit statuses", run: clicmd.Wait},
		{name: "get", usage: "benchq get JOB_ID [--json] [flags]", summary: "show a job", run: clicmd.Get},
		{name: "results", usage: "benchq results JOB_ID [--timeline] [flags]",
			summary: "print a job's runs and analysis as JSON; --timeline adds each run's intervals", run: clicmd.Results},
		{name: "list", usage: "benchq list [--status S] [--label key:value]... [--name PART] [--limit N] [--cursor C] [--json] [flags]",
			summary: "list the API key's jobs, newest first", run: clicmd.List},
		{name: "cancel", usage: "benchq cancel JOB_ID [flags]", summary: "cancel a job (exit 2 if it had already finished)", run: clicmd.Cancel},
		{name: "report", usage: "benchq report JOB_ID [--format F] [--run POINT:REPEAT] [--out FILE] [flags]", summary: "fetch a job's report", run: clicmd.Report},
		{name: "keys", usage: "benchq keys add NAME [flags] | list | revoke ID",
			summary: "create, list and revoke API keys in the service's Redis", run: clicmd.Keys},
		{name: "ab", usage: "benchq ab [--server URL [--shards K]] [options] [http[s]://]hostname[:port]/path",
			summary: "ApacheBench drop-in on benchq's engine, with ab's own single-dash options", run: abcli.Run},
		{name: "healthcheck", usage: "benchq healthcheck [--url URL] [--timeout D]",
			summary: "container probe: exit 0 when the URL answers 200", run: clicmd.Healthcheck},
		{name: "version", usage: "benchq version", summary: "the version, VCS revision and Go version (also --version)", run: clicmd.Version},
		{name: "help", usage: "benchq help [command]", summary: "list the commands, or show one command's usage and flags", run: runHelp},
	}
}

// lookup finds a command by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// subcommands are the commands run dispatches by name; the rest of the
// table (all, serve, worker) and any command line starting with a flag are the
// service's. Tests walk this table, so a new command's help is checked
// with the others'.
func subcommands() map[string]subcommand {
	m := map[string]subcommand{}
	for _, c := range commands() {
		if c.run != nil {
			m[c.name] = c.run
		}
	}
	return m
}

// runService is `benchq [all|serve|worker]`: load the configuration, start
// the service, wait for a signal or a component failure, shut down.
func runService(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(args, getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(stdout, cfg.Command)
		if cfg.Command == config.CommandAll {
			writeCommands(stdout)
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
