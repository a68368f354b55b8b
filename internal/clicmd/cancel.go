package clicmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/client"
)

const cancelSynopsis = `benchq cancel JOB_ID [flags]

Cancels a job: a queued one never starts, a running one stops within about
a second and keeps the runs already finished. Prints the job's new state.
Exits 0, 2 when the job had already finished, 3 on a usage, connection or
API error (an unknown job included).`

// Cancel is `benchq cancel`.
func Cancel(ctx context.Context, args []string, env Env) int {
	fs := NewFlagSet("benchq cancel", cancelSynopsis, env.Stderr)
	api := AddAPIFlags(fs, env.Getenv)
	id, err := parseJobID(fs, args)
	if err != nil {
		return UsageExit("benchq cancel", err, env.Stderr)
	}
	c, err := api.Client()
	if err != nil {
		return UsageExit("benchq cancel", err, env.Stderr)
	}
	j, err := c.Cancel(ctx, id)
	if errors.Is(err, client.ErrConflict) {
		fmt.Fprintf(env.Stderr, "benchq cancel: job %s had already finished: %v\n", id, err)
		return ExitJobEnded
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "benchq cancel: %v\n", err)
		return ExitError
	}
	fmt.Fprintln(env.Stdout, statusLine(j))
	return ExitOK
}
