package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
)

// Exit statuses of `benchq submit`, `get` and `cancel`. CI gates a merge on
// them, so their meaning never changes.
const (
	exitOK              = 0 // succeeded with verdict pass or none; get/cancel done
	exitThresholdFailed = 1 // succeeded with verdict fail: a threshold failed, or a run had no successful request
	exitJobEnded        = 2 // the job failed or was canceled; cancel: it had already finished
	exitError           = 3 // bad command line, unreachable server, or an API error
)

// cliEnv is what a client command takes from its process: only cmd/ reads
// os, and tests hand in their own.
type cliEnv struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// tty is true when stderr is a terminal: progress is drawn as a bar.
	tty bool
}

func processEnv(stdin io.Reader, stdout, stderr io.Writer) cliEnv {
	return cliEnv{getenv: os.Getenv, stdin: stdin, stdout: stdout, stderr: stderr, tty: isTerminal(stderr)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// apiFlags are the flags every client command shares.
type apiFlags struct {
	server string
	key    string
}

// addAPIFlags declares --server and --key with their environment defaults.
func addAPIFlags(fs *flag.FlagSet, getenv func(string) string) *apiFlags {
	a := &apiFlags{server: defaultServer, key: getenv("BENCHQ_API_KEY")}
	if s := getenv("BENCHQ_SERVER"); s != "" {
		a.server = s
	}
	fs.StringVar(&a.server, "server", a.server, "benchq API base URL (env BENCHQ_SERVER)")
	fs.StringVar(&a.key, "key", a.key, "API key, sent as Authorization: Bearer (env BENCHQ_API_KEY)")
	return a
}

func (a *apiFlags) client() (*client.Client, error) {
	return client.New(a.server, a.key)
}

// newFlagSet is a client command's flag set: errors and -h go to stderr
// with the synopsis and the flags.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// usageExit turns a parse error into an exit status: -h is a success.
func usageExit(name string, err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return exitError
}

// statusLine is one line on a job: id, status, runs, the current run's
// requests and rate while running, the verdict once known.
func statusLine(j client.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %d/%d runs", j.ID, j.Status, j.Progress.RunsDone, j.Progress.RunsTotal)
	if j.Status == job.StatusRunning {
		fmt.Fprintf(&b, "  %d requests in this run  %.0f req/s", j.Progress.RequestsDone, j.Progress.CurrentRPS)
	}
	if j.CancelRequested && !j.Status.Terminal() {
		b.WriteString("  cancel requested")
	}
	if j.Verdict != "" {
		b.WriteString("  verdict " + j.Verdict)
	}
	if j.Error != "" {
		b.WriteString("  error: " + j.Error)
	}
	return b.String()
}

// commandsUsage lists the client commands under `benchq --help`.
func commandsUsage(w io.Writer) {
	fmt.Fprint(w, `
Client commands (each takes --server URL, env BENCHQ_SERVER, default `+defaultServer+`,
and --key KEY, env BENCHQ_API_KEY; -h lists the rest):
  benchq submit [job.json | -] [--ab "-n 1000 -c 10 URL"] [--wait] [--out report.md]...
      submit a job; with --wait follow it and exit 0 pass, 1 verdict fail (a
      threshold failed or a run had no successful request), 2 job failed or
      canceled, 3 usage, connection or API error
  benchq get JOB_ID [--json]       show a job
  benchq cancel JOB_ID             cancel a job (exit 2 if it already finished)
  benchq report JOB_ID [--format F] [--out FILE]
                                   fetch a job's report
`)
}

// parseJobID parses a command line that names exactly one job.
func parseJobID(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", fmt.Errorf("want exactly one job id, got %d", len(pos))
	}
	return pos[0], nil
}
