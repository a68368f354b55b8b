package clicmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
)

// Exit statuses of `benchq submit`, `wait`, `get`, `list` and `cancel`. CI
// gates a merge on them, so their meaning never changes.
const (
	ExitOK              = 0 // succeeded with verdict pass or none; get/cancel done
	ExitThresholdFailed = 1 // succeeded with verdict fail: a threshold failed, or a run had no successful request
	ExitJobEnded        = 2 // the job failed or was canceled; cancel: it had already finished
	ExitError           = 3 // bad command line, unreachable server, or an API error
)

// Env is what a command takes from its process: the binary hands in the
// process's own, tests theirs.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// TTY is true when Stderr is a terminal: progress is drawn as a bar.
	TTY bool
}

// APIFlags are the flags every client command shares. The API key is no
// flag default: flag prints defaults in every usage message, and a typo in
// a CI job would put the key in its log. It is read when the command runs,
// from --key, else --key-file, else BENCHQ_API_KEY.
type APIFlags struct {
	server  string
	key     string // --key
	keyFile string // --key-file
	getenv  func(string) string
}

// AddAPIFlags declares --server, --key and --key-file.
func AddAPIFlags(fs *flag.FlagSet, getenv func(string) string) *APIFlags {
	a := &APIFlags{server: DefaultServer, getenv: getenv}
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
func (a *APIFlags) apiKey() (string, error) {
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

// Server is the API base URL the flags name.
func (a *APIFlags) Server() string { return a.server }

// Client is a client of the API the flags name, with their key.
func (a *APIFlags) Client() (*client.Client, error) {
	key, err := a.apiKey()
	if err != nil {
		return nil, err
	}
	return client.New(a.server, key)
}

// NewFlagSet is a command's flag set: errors and -h go to stderr
// with the synopsis and the flags.
func NewFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\nFlags:\n", synopsis)
		printFlags(stderr, fs)
	}
	return fs
}

// printFlags is flag's PrintDefaults with every flag written --name, the
// one way the help and the docs write them (flag accepts -name too).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		switch def := f.DefValue; {
		case def == "" || def == "0" || def == "false" || def == "0s":
		case typ == "string":
			line += fmt.Sprintf(" (default %q)", def)
		default:
			line += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintln(w, line)
	})
}

// UsageExit turns a parse error into an exit status: -h is a success.
func UsageExit(name string, err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitError
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
