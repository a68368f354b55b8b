package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
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

// apiFlags are the flags every client command shares. The API key is no
// flag default: flag prints defaults in every usage message, and a typo in
// a CI job would put the key in its log. It is read when the command runs,
// from --key, else --key-file, else BENCHQ_API_KEY.
type apiFlags struct {
	server  string
	key     string // --key
	keyFile string // --key-file
	getenv  func(string) string
}

// addAPIFlags declares --server, --key and --key-file.
func addAPIFlags(fs *flag.FlagSet, getenv func(string) string) *apiFlags {
	a := &apiFlags{server: defaultServer, getenv: getenv}
	if s := getenv("BENCHQ_SERVER"); s != "" {
		a.server = s
	}
	fs.StringVar(&a.server, "server", a.server, "benchq API base URL (env BENCHQ_SERVER)")
	fs.StringVar(&a.keyFile, "key-file", "", "read the API key, sent as Authorization: Bearer, from this file (default: env BENCHQ_API_KEY)")
	fs.StringVar(&a.key, "key", "", "the API key itself; prefer env BENCHQ_API_KEY or --key-file, as any user of the machine can read a command line (ps)")
	return a
}

// apiKey is the key to send, "" for none: --key, else the content of
// --key-file, else BENCHQ_API_KEY.
func (a *apiFlags) apiKey() (string, error) {
	switch {
	case a.key != "" && a.keyFile != "":
		return "", errors.New("give --key or --key-file, not both")
	case a.key != "":
		return a.key, nil
	case a.keyFile == "":
		return a.getenv("BENCHQ_API_KEY"), nil
	}
	key, err := readSecretFile(a.keyFile)
	if err != nil {
		return "", fmt.Errorf("--key-file: %w", err)
	}
	return key, nil
}

// readSecretFile returns the content of the file at path without
// surrounding whitespace. Its errors quote neither the content nor the
// path: a secret pasted where the path belongs would show up in them.
func readSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return "", fmt.Errorf("cannot %s the file: %w", pe.Op, pe.Err)
	}
	if err != nil {
		return "", err
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return "", errors.New("the file is empty")
	}
	return secret, nil
}

func (a *apiFlags) client() (*client.Client, error) {
	key, err := a.apiKey()
	if err != nil {
		return nil, err
	}
	return client.New(a.server, key)
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
// requests and rate while running, why it waits while queued, the
// verdict once known.
func statusLine(j client.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %d/%d runs", j.ID, j.Status, j.Progress.RunsDone, j.Progress.RunsTotal)
	if j.Status == job.StatusRunning {
		fmt.Fprintf(&b, "  %d requests in this run  %.0f req/s", j.Progress.RequestsDone, j.Progress.CurrentRPS)
	}
	if j.Status == job.StatusQueued && j.QueuedReason != "" {
		b.WriteString("  " + j.QueuedReason)
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
and the API key from env BENCHQ_API_KEY or --key-file FILE; -h lists the rest):
  benchq submit [job.json | -] [--ab "-n 1000 -c 10 URL"] [--wait] [--out report.md]...
      submit a job; with --wait follow it and exit 0 pass, 1 verdict fail (a
      threshold failed or a run had no successful request), 2 job failed or
      canceled, 3 usage, connection or API error
  benchq wait JOB_ID [--out FILE]...
                                   re-attach to a job: follow it as submit --wait
                                   does, with the same exit statuses
  benchq get JOB_ID [--json]       show a job
  benchq list [--status S] [--label k:v]... [--json]
                                   list the key's jobs, newest first
  benchq cancel JOB_ID             cancel a job (exit 2 if it already finished)
  benchq report JOB_ID [--format F] [--out FILE]
                                   fetch a job's report
  benchq version                   the version, VCS revision and Go version (also --version)
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
