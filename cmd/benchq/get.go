package main

import (
	"context"
	"fmt"
	"io"
)

const getSynopsis = `benchq get JOB_ID [--json] [flags]

Shows a job: id, status, runs done of runs total, the current run while it
runs, and the verdict. --json prints the server's JSON instead.
Exits 0, or 3 on a usage, connection or API error (an unknown job included).`

// runGet is `benchq get`.
func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return getMain(ctx, args, processEnv(nil, stdout, stderr))
}

func getMain(ctx context.Context, args []string, env cliEnv) int {
	fs := newFlagSet("benchq get", getSynopsis, env.stderr)
	api := addAPIFlags(fs, env.getenv)
	asJSON := fs.Bool("json", false, "print the job as the server's JSON")
	id, err := parseJobID(fs, args)
	if err != nil {
		return usageExit("benchq get", err, env.stderr)
	}
	c, err := api.client()
	if err != nil {
		return usageExit("benchq get", err, env.stderr)
	}
	j, err := c.Job(ctx, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "benchq get: %v\n", err)
		return exitError
	}
	if *asJSON {
		fmt.Fprintf(env.stdout, "%s\n", j.Raw)
		return exitOK
	}
	fmt.Fprintln(env.stdout, statusLine(j))
	return exitOK
}
