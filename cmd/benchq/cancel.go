package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/benchq/benchq/internal/client"
)

const cancelSynopsis = `benchq cancel JOB_ID [flags]

Cancels a job: a queued one never starts, a running one stops within about
a second and keeps the runs already finished. Prints the job's new state.
Exits 0, 2 when the job had already finished, 3 on a usage, connection or
API error (an unknown job included).`

// runCancel is `benchq cancel`.
func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cancelMain(ctx, args, processEnv(nil, stdout, stderr))
}

func cancelMain(ctx context.Context, args []string, env cliEnv) int {
	fs := newFlagSet("benchq cancel", cancelSynopsis, env.stderr)
	api := addAPIFlags(fs, env.getenv)
	id, err := parseJobID(fs, args)
	if err != nil {
		return usageExit("benchq cancel", err, env.stderr)
	}
	c, err := api.client()
	if err != nil {
		return usageExit("benchq cancel", err, env.stderr)
	}
	j, err := c.Cancel(ctx, id)
	if errors.Is(err, client.ErrConflict) {
		fmt.Fprintf(env.stderr, "benchq cancel: job %s had already finished: %v\n", id, err)
		return exitJobEnded
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "benchq cancel: %v\n", err)
		return exitError
	}
	fmt.Fprintln(env.stdout, statusLine(j))
	return exitOK
}
