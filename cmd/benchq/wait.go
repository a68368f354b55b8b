package main

import (
	"context"
	"fmt"
	"io"
)

const waitSynopsis = `benchq wait JOB_ID [--out FILE]... [--timeout D] [--quiet] [flags]

Re-attaches to a job, e.g. after an interrupted submit --wait: follows it
with the same progress display, prints its Markdown summary, writes the
--out files and exits as submit --wait does: 0 = succeeded with verdict
pass or none, 1 = verdict fail, 2 = the job failed or was canceled,
3 = usage, connection or API error. A job that already ended is reported
at once.`

// runWait is `benchq wait`.
func runWait(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return waitMain(ctx, args, processEnv(stdin, stdout, stderr))
}

func waitMain(ctx context.Context, args []string, env cliEnv) int {
	a := submitArgs{wait: true}
	fs := newFlagSet("benchq wait", waitSynopsis, env.stderr)
	a.api = addAPIFlags(fs, env.getenv)
	addWaitFlags(fs, &a)
	id, err := parseJobID(fs, args)
	if err == nil && a.timeout < 0 {
		err = fmt.Errorf("--timeout must not be negative, got %s", a.timeout)
	}
	if err != nil {
		return usageExit("benchq wait", err, env.stderr)
	}
	c, err := a.api.client()
	if err != nil {
		return usageExit("benchq wait", err, env.stderr)
	}
	j, err := c.Job(ctx, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "benchq wait: %v\n", err)
		return exitError
	}
	s := &submission{name: "benchq wait", args: a, env: env, c: c, job: j}
	if !a.quiet {
		fmt.Fprintf(env.stderr, "benchq: following job %s, %s, %d/%d runs (Ctrl-C stops waiting, not the job)\n",
			j.ID, j.Status, j.Progress.RunsDone, j.Progress.RunsTotal)
	}
	return s.wait(ctx)
}
