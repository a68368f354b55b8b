package clicmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/report"
)

const submitSynopsis = `benchq submit [job.json | -] [--ab "-n 1000 -c 10 URL"] [--wait] [--out FILE]... [--junit FILE] [flags]

Submits a job: the spec from a file, from stdin (-), or built from one ab
command line with --ab. Without --wait it prints the job id. With --wait it
follows the job, prints its Markdown summary, writes the --out files and
the --junit file (also when a threshold failed, for CI's test report) and
exits 0 = succeeded with verdict pass or none, 1 = a threshold failed or a
run had no successful request (verdict fail), 2 = the job failed or was
canceled, 3 = usage, connection or API error.`

// submitArgs is `benchq submit`'s parsed command line.
type submitArgs struct {
	api            *APIFlags
	specPath       string // a file, "-" for stdin, "" with --ab
	ab             string
	wait           bool
	outs           outList
	junit          string // --junit: also in outs, as FormatJUnit
	idempotencyKey string
	timeout        time.Duration
	quiet          bool
	secretFile     string // --webhook-secret-file
	retryWait      time.Duration
}

// addWaitFlags declares the flags of following a job, which submit --wait
// and wait share.
func addWaitFlags(fs *flag.FlagSet, a *submitArgs) {
	fs.Var(&a.outs, "out", "with --wait: write the report to this `FILE`, format from the extension (.md .json .svg .csv .txt, .xml for JUnit); repeatable")
	fs.DurationVar(&a.timeout, "timeout", 0, "with --wait: stop waiting after this long (exit 3, the job keeps running); 0 waits for ever")
	fs.BoolVar(&a.quiet, "quiet", false, "no progress or notes on stderr; errors and results only")
	fs.Func("junit", "with --wait: write the job's verdict as JUnit XML to this `FILE` (a testcase per threshold and cell), also when a threshold failed, for CI's test report", a.setJUnit)
}

// setJUnit takes --junit: one more --out, in JUnit whatever the file's
// extension, since CI tools name theirs freely (TEST-benchq.xml,
// junit.xml, report.junit).
func (a *submitArgs) setJUnit(path string) error {
	switch {
	case path == "":
		return errors.New("want a file name")
	case a.junit != "":
		return fmt.Errorf("given twice (%s and %s); use --out FILE.xml for another copy", a.junit, path)
	}
	a.junit = path
	a.outs = append(a.outs, outFile{path: path, format: report.FormatJUnit})
	return nil
}

// outFile is one --out: where, and in which format its extension says.
type outFile struct {
	path   string
	format report.Format
}

// outList is the repeatable --out flag.
type outList []outFile

func (l *outList) String() string {
	paths := make([]string, 0, len(*l))
	for _, o := range *l {
		paths = append(paths, o.path)
	}
	return strings.Join(paths, ",")
}

func (l *outList) Set(path string) error {
	f, err := report.FormatOfPath(path)
	if err != nil {
		return err
	}
	*l = append(*l, outFile{path: path, format: f})
	return nil
}

// Submit is `benchq submit`.
func Submit(ctx context.Context, args []string, env Env) int {
	a, err := parseSubmitArgs(args, env)
	if err != nil {
		return UsageExit("benchq submit", err, env.Stderr)
	}
	c, err := a.api.Client()
	if err != nil {
		return UsageExit("benchq submit", err, env.Stderr)
	}
	spec, err := a.spec(env.Stdin)
	if err != nil {
		return UsageExit("benchq submit", err, env.Stderr)
	}
	sub, err := submitRetrying(ctx, c, client.Submission{Spec: spec, IdempotencyKey: a.idempotencyKey}, a.retryWait, env.Stderr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "benchq submit: %v\n", err)
		return ExitError
	}
	s := &submission{name: "benchq submit", args: a, env: env, c: c, job: sub.Job}
	if err := s.keepSecret(); err != nil {
		fmt.Fprintf(env.Stderr, "benchq submit: job %s was submitted, but %v\n", sub.Job.ID, err)
		if a.idempotencyKey != "" {
			fmt.Fprintf(env.Stderr, "benchq submit: run it again with the same --idempotency-key to get the secret again\n")
		}
		return ExitError
	}
	s.announce(sub.Replayed)
	if !a.wait {
		fmt.Fprintln(env.Stdout, sub.Job.ID)
		return ExitOK
	}
	return s.wait(ctx)
}

// parseSubmitArgs reads the command line; the CI docs test uses it to check
// the commands the examples run.
func parseSubmitArgs(args []string, env Env) (submitArgs, error) {
	var a submitArgs
	fs := NewFlagSet("benchq submit", submitSynopsis, env.Stderr)
	a.api = AddAPIFlags(fs, env.Getenv)
	fs.StringVar(&a.ab, "ab", "", `submit one target from an ab command line, e.g. "-n 1000 -c 10 http://127.0.0.1:8081/"`)
	fs.BoolVar(&a.wait, "wait", false, "follow the job to its end, print the summary and exit with its outcome")
	addWaitFlags(fs, &a)
	fs.StringVar(&a.idempotencyKey, "idempotency-key", "", "sent as Idempotency-Key: a retried submit returns the same job")
	fs.DurationVar(&a.retryWait, "retry-wait", defaultRetryWait, "on 429 or 503 wait as long as the server's Retry-After says and submit again, for at most this long in all; 0 never retries")
	fs.StringVar(&a.secretFile, "webhook-secret-file", "", "write the job's generated webhook secret to this file (mode 0600) instead of showing it; it is shown on stderr only when stderr is a terminal")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return a, err
	}
	switch {
	case len(pos) > 1:
		return a, fmt.Errorf("want at most one job file, got %d: %q", len(pos), pos)
	case len(pos) == 1 && a.ab != "":
		return a, fmt.Errorf("give a job file or --ab, not both")
	case len(pos) == 0 && a.ab == "":
		return a, fmt.Errorf("want a job file, - for stdin, or --ab; see benchq submit -h")
	case a.junit != "" && !a.wait:
		return a, fmt.Errorf("--junit needs --wait: the verdict exists once the job ends")
	case len(a.outs) > 0 && !a.wait:
		return a, fmt.Errorf("--out needs --wait: the report exists once the job ends")
	case a.timeout < 0:
		return a, fmt.Errorf("--timeout must not be negative, got %s", a.timeout)
	case a.retryWait < 0:
		return a, fmt.Errorf("--retry-wait must not be negative, got %s", a.retryWait)
	}
	if len(pos) == 1 {
		a.specPath = pos[0]
	}
	return a, nil
}

// spec returns the job spec to send.
func (a submitArgs) spec(stdin io.Reader) ([]byte, error) {
	if a.ab != "" {
		// Only the target: every other field keeps the server's default,
		// and the ab flags decide the request and the load.
		return json.Marshal(map[string]any{"targets": []map[string]string{{"ab": a.ab}}})
	}
	var b []byte
	var err error
	if a.specPath == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(a.specPath)
	}
	if err != nil {
		return nil, fmt.Errorf("read job spec: %w", err)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("job spec %s is not valid JSON", a.specPath)
	}
	return b, nil
}

// submission is one submitted job being waited for.
type submission struct {
	name string // the command, for its messages: submit or wait
	args submitArgs
	env  Env
	c    *client.Client
	job  client.Job
}

// keepSecret hands the caller the webhook secret the server generated for
// the job, which it shows only in the answer to the submission (and to a
// retry with the same idempotency key). It goes to --webhook-secret-file,
// or to stderr when that is a terminal; never into a log that may be
// public (CI), where anyone could forge the job's webhooks with it.
func (s *submission) keepSecret() error {
	j, path := s.job, s.args.secretFile
	switch {
	case j.WebhookSecret == "" && path != "":
		if !s.args.quiet {
			fmt.Fprintf(s.env.Stderr, "benchq: no webhook secret was issued for job %s (no webhook, or the API key signs with its own secret); %s not written\n", j.ID, path)
		}
	case j.WebhookSecret == "":
	case path != "":
		if err := writeSecretFile(path, j.WebhookSecret); err != nil {
			return err
		}
		if !s.args.quiet {
			fmt.Fprintf(s.env.Stderr, "benchq: webhook secret of job %s written to %s\n", j.ID, path)
		}
	case s.env.TTY:
		fmt.Fprintf(s.env.Stderr, "benchq: webhook secret of job %s: %s\n"+
			"benchq: GET never shows it again; store it where your receiver reads it\n", j.ID, j.WebhookSecret)
	default:
		// Even with --quiet: this is the one chance to learn it exists.
		fmt.Fprintf(s.env.Stderr, "benchq: job %s was issued a webhook secret; it is not printed because stderr is not a terminal (logs may be public).\n"+
			"benchq: to get it, submit with --webhook-secret-file FILE (a retry with the same --idempotency-key returns it again)\n", j.ID)
	}
	return nil
}

// writeSecretFile writes secret alone, without a newline, readable by its
// owner only, also when the file existed with a wider mode.
func writeSecretFile(path, secret string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("webhook secret file: %w", err)
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = io.WriteString(f, secret)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("webhook secret file %s: %w", path, err)
	}
	return nil
}

// announce tells what was submitted.
func (s *submission) announce(replayed bool) {
	j := s.job
	if s.args.quiet || !s.args.wait {
		return
	}
	what := "submitted"
	if replayed {
		what = "already submitted with this idempotency key"
	}
	fmt.Fprintf(s.env.Stderr, "benchq: job %s %s, %d runs; following it (Ctrl-C stops waiting, not the job)\n",
		j.ID, what, j.Progress.RunsTotal)
}

// wait follows the job to its end and turns the outcome into the exit
// status.
func (s *submission) wait(ctx context.Context) int {
	waitCtx, cancel := ctx, context.CancelFunc(func() {})
	if s.args.timeout > 0 {
		waitCtx, cancel = context.WithTimeout(ctx, s.args.timeout)
	}
	defer cancel()
	view := newProgressView(s.env.Stderr, s.env.TTY, s.args.quiet, s.job)
	final, err := s.c.Follow(waitCtx, s.job.ID, view.update)
	view.finish(final)
	if err != nil {
		return s.stoppedWaiting(ctx, err)
	}
	if !s.args.quiet {
		fmt.Fprintf(s.env.Stderr, "benchq: %s\n", statusLine(final))
	}
	code := outcome(final)
	if err := s.writeReports(ctx); err != nil {
		fmt.Fprintf(s.env.Stderr, "%s: %v\n", s.name, err)
		if code == ExitOK { // a passing gate must not hide a missing artifact
			code = ExitError
		}
	}
	return code
}

// stoppedWaiting explains why the wait ended early; the job is left
// running on purpose, and the user is told how to stop it.
func (s *submission) stoppedWaiting(ctx context.Context, err error) int {
	id := s.job.ID
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(s.env.Stderr, "%s: interrupted; stopped waiting for job %s, which keeps running\n", s.name, id)
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(s.env.Stderr, "%s: gave up waiting after %s; job %s keeps running\n", s.name, s.args.timeout, id)
	default:
		fmt.Fprintf(s.env.Stderr, "%s: following job %s: %v\n", s.name, id, err)
	}
	fmt.Fprintf(s.env.Stderr, "%s: to re-attach: benchq wait %s --server %s; to cancel it: benchq cancel %s --server %s\n", s.name, id, s.args.api.server, id, s.args.api.server)
	return ExitError
}

// outcome is the exit status a finished job gives.
func outcome(j client.Job) int {
	switch {
	case j.Status == job.StatusSucceeded && j.Verdict == "fail":
		return ExitThresholdFailed
	case j.Status == job.StatusSucceeded:
		return ExitOK
	}
	return ExitJobEnded
}

// writeReports prints the Markdown summary to stdout and writes every
// --out file, reporting the first failure after trying them all.
func (s *submission) writeReports(ctx context.Context) error {
	var errs []error
	if err := s.fetchReport(ctx, report.FormatMarkdown, "", s.env.Stdout); err != nil {
		errs = append(errs, err)
	}
	for _, o := range s.args.outs {
		if err := s.fetchReport(ctx, o.format, o.path, nil); err != nil {
			errs = append(errs, err)
		} else if !s.args.quiet {
			fmt.Fprintf(s.env.Stderr, "benchq: wrote %s\n", o.path)
		}
	}
	return errors.Join(errs...)
}

func (s *submission) fetchReport(ctx context.Context, f report.Format, path string, stdout io.Writer) error {
	body, err := s.c.Report(ctx, s.job.ID, string(f))
	if err != nil {
		return fmt.Errorf("%s report: %w", f, err)
	}
	defer body.Close()
	return writeReport(body, path, stdout)
}

// defaultRetryWait bounds how long submit waits out a busy server: long
// enough for a rate-limit window, short enough that a CI job fails fast
// when the server stays unavailable.
const defaultRetryWait = 2 * time.Minute

// submitRetrying submits, and on a 429 (rate limit, quota) or 503 (store
// unavailable) waits as long as the answer's Retry-After says and submits
// again, until the next wait would go past maxWait in all. It says on
// stderr that it waits: a silent pause looks like a hang.
func submitRetrying(ctx context.Context, c *client.Client, sub client.Submission, maxWait time.Duration, stderr io.Writer) (client.Submitted, error) {
	var waited time.Duration
	for {
		out, err := c.Submit(ctx, sub)
		var ae *client.APIError
		if err == nil || !errors.As(err, &ae) ||
			(ae.Status != http.StatusTooManyRequests && ae.Status != http.StatusServiceUnavailable) {
			return out, err
		}
		d := ae.RetryAfter
		if d <= 0 {
			d = time.Second
		}
		if waited+d > maxWait {
			if maxWait > 0 {
				err = fmt.Errorf("%w (gave up after waiting %s; --retry-wait is %s)", err, waited, maxWait)
			}
			return out, err
		}
		fmt.Fprintf(stderr, "benchq submit: server answered %d %s; retrying in %s as its Retry-After says (--retry-wait %s)\n",
			ae.Status, ae.Problem.Title, d, maxWait)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, fmt.Errorf("interrupted while waiting to retry: %w", err)
		case <-t.C:
		}
		waited += d
	}
}
