package clicmd

import (
	"context"
	"fmt"
)

const getSynopsis = `benchq get JOB_ID [--json] [flags]

Shows a job: id, status, runs done of runs total, the current run while it
runs, and the verdict. --json prints the server's JSON instead.
Exits 0, or 3 on a usage, connection or API error (an unknown job included).`

// Get is `benchq get`.
func Get(ctx context.Context, args []string, env Env) int {
	fs := NewFlagSet("benchq get", getSynopsis, env.Stderr)
	api := AddAPIFlags(fs, env.Getenv)
	asJSON := fs.Bool("json", false, "print the job as the server's JSON")
	id, err := parseJobID(fs, args)
	if err != nil {
		return UsageExit("benchq get", err, env.Stderr)
	}
	c, err := api.Client()
	if err != nil {
		return UsageExit("benchq get", err, env.Stderr)
	}
	j, err := c.Job(ctx, id)
	if err != nil {
		fmt.Fprintf(env.Stderr, "benchq get: %v\n", err)
		return ExitError
	}
	if *asJSON {
		fmt.Fprintf(env.Stdout, "%s\n", j.Raw)
		return ExitOK
	}
	fmt.Fprintln(env.Stdout, statusLine(j))
	return ExitOK
}
