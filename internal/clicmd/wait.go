package clicmd

import (
	"context"
	"fmt"
)

const waitSynopsis = `benchq wait JOB_ID [--out FILE]... [--junit FILE] [--timeout D] [--quiet] [flags]

Re-attaches to a job, e.g. after an interrupted submit --wait: follows it
with the same progress display, prints its Markdown summary, writes the
--out files and the --junit file and exits as submit --wait does: 0 = succeeded with verdict
pass or none, 1 = verdict fail, 2 = the job failed or was canceled,
3 = usage, connection or API error. A job that already ended is reported
at once.`

// Wait is `benchq wait`.
func Wait(ctx context.Context, args []string, env Env) int {
	a := submitArgs{wait: true}
	fs := NewFlagSet("benchq wait", waitSynopsis, env.Stderr)
	a.api = AddAPIFlags(fs, env.Getenv)
	addWaitFlags(fs, &a)
	id, err := parseJobID(fs, args)
	if err == nil && a.timeout < 0 {
		err = fmt.Errorf("--timeout must not be negative, got %s", a.timeout)
	}
	if err != nil {
		return UsageExit("benchq wait", err, env.Stderr)
	}
	c, err := a.api.Client()
	if err != nil {
		return UsageExit("benchq wait", err, env.Stderr)
	}
	j, err := c.Job(ctx, id)
	if err != nil {
		fmt.Fprintf(env.Stderr, "benchq wait: %v\n", err)
		return ExitError
	}
	s := &submission{name: "benchq wait", args: a, env: env, c: c, job: j}
	if !a.quiet {
		fmt.Fprintf(env.Stderr, "benchq: following job %s, %s, %d/%d runs (Ctrl-C stops waiting, not the job)\n",
			j.ID, j.Status, j.Progress.RunsDone, j.Progress.RunsTotal)
	}
	return s.wait(ctx)
}
