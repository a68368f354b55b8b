package clicmd

import (
	"context"
	"fmt"

	"github.com/benchq/benchq/internal/client"
)

const resultsSynopsis = `benchq results JOB_ID [--timeline] [flags]

Prints a job's results as the server's JSON: every stored run with its
ab-compatible result, and the analysis. --timeline adds each run's
timeline: its intervals' requests, failures, bytes and latency percentiles.
Exits 0, or 3 on a usage, connection or API error (an unknown job included).`

// Results is `benchq results`.
func Results(ctx context.Context, args []string, env Env) int {
	fs := NewFlagSet("benchq results", resultsSynopsis, env.Stderr)
	api := AddAPIFlags(fs, env.Getenv)
	timeline := fs.Bool("timeline", false, "add each run's timeline, interval by interval")
	id, err := parseJobID(fs, args)
	if err != nil {
		return UsageExit("benchq results", err, env.Stderr)
	}
	c, err := api.Client()
	if err != nil {
		return UsageExit("benchq results", err, env.Stderr)
	}
	r, err := c.Results(ctx, id, client.ResultsOptions{Timeline: *timeline})
	if err != nil {
		fmt.Fprintf(env.Stderr, "benchq results: %v\n", err)
		return ExitError
	}
	fmt.Fprintf(env.Stdout, "%s\n", r.Raw)
	return ExitOK
}
