// Package clicmd holds benchq's client commands: submit, wait, get, list,
// cancel and report talk to a running service's API (internal/client);
// keys manages API keys in its Redis; healthcheck probes it from a
// container; version describes the binary. Each command is a function of
// its arguments and an Env (the process's environment and streams, which
// only cmd/benchq reads from os) that returns the exit status, so the
// binary's command table dispatches to it and tests run it in-process.
// The files a command line names (a job spec, --key-file, --out) are read
// and written here, as a command's own input and output.
//
// What a command prints on failure is a sentence for the person at the
// terminal, "benchq CMD: what went wrong", never a Go error chain.
package clicmd
