package abcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/abcmd"
	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
)

// remoteABFlags are the options that send `benchq ab` through the
// service. They come before every ab option, so an ab value that looks
// like one ("-H '--server: x'") is never taken for it.
var remoteABFlags = map[string]bool{"--server": true, "--shards": true, "--key": true, "--key-file": true}

// splitRemoteAB cuts the leading service options off an ab command line;
// n is how many arguments they took (0: a local run).
func splitRemoteAB(args []string) (n int) {
	for n < len(args) {
		name, _, joined := strings.Cut(args[n], "=")
		if !remoteABFlags[name] {
			return n
		}
		n++
		if !joined {
			n++
		}
	}
	return min(n, len(args))
}

// runABRemote is `benchq ab --server URL [--shards K] [ab options] URL`:
// the same ab command line submitted as a job (one ab target, sweep.shards
// K), waited for, and its merged result printed as a local run prints
// it. Each shard's worker and share go to stderr; stdout stays ab's.
func runABRemote(ctx context.Context, lead, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("benchq ab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := clicmd.AddAPIFlags(fs, getenv)
	shards := fs.Int("shards", 1, "split the run over this many worker processes of the service")
	if err := fs.Parse(lead); err != nil {
		return abExitUsage
	}
	if *shards < 1 || *shards > job.MaxShards {
		fmt.Fprintf(stderr, "ab: --shards %d: want 1 to %d worker processes\n", *shards, job.MaxShards)
		return abExitUsage
	}
	a, err := abcmd.ParseAB(args)
	if err != nil {
		return abParseFailed(err, stdout, stderr)
	}
	c, err := api.Client()
	if err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	spec, err := json.Marshal(map[string]any{
		"targets": []map[string]string{{"ab": abcmd.JoinCommandLine(args)}},
		"sweep":   map[string]int{"shards": *shards},
	})
	if err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	sub, err := c.Submit(ctx, client.Submission{Spec: spec})
	if err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	id := sub.Job.ID
	fmt.Fprintf(stderr, "benchq ab: job %s submitted to %s on %d worker process(es); waiting for it\n", id, api.Server(), *shards)
	final, err := c.Follow(ctx, id, nil)
	if err != nil {
		fmt.Fprintf(stderr, "benchq ab: following job %s: %v (the job keeps running: benchq cancel %s --server %s)\n", id, err, id, api.Server())
		return abExitErr
	}
	if final.Status != job.StatusSucceeded {
		fmt.Fprintf(stderr, "benchq ab: job %s %s: %s\n", id, final.Status, final.Error)
		return abExitErr
	}
	run, err := remoteRun(ctx, c, id)
	if err != nil {
		fmt.Fprintf(stderr, "benchq ab: job %s: %v\n", id, err)
		return abExitErr
	}
	for i, s := range run.Shards {
		fmt.Fprintf(stderr, "benchq ab: shard %d on %s: %d requests at concurrency %d, %s to %s\n", i, s.Worker,
			s.CompleteRequests, s.Concurrency, s.StartedAt.Format("15:04:05.000000"), s.FinishedAt.Format("15:04:05.000000"))
	}
	if run.Result.Aborted != "" {
		fmt.Fprintf(stderr, "benchq ab: run aborted: %s\n", run.Result.Aborted)
		return abExitErr
	}
	if err := writeRemoteAB(a, run.Result, stdout); err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	return abExitOK
}

// remoteABRun is what `benchq ab --server` reads of the job's one run.
type remoteABRun struct {
	Result *abreport.Report `json:"result"`
	Shards []job.ShardRun   `json:"shards"`
}

// remoteRun fetches the job's run from its JSON report, the document
// /results serves.
func remoteRun(ctx context.Context, c *client.Client, id string) (remoteABRun, error) {
	body, err := c.Report(ctx, id, "json")
	if err != nil {
		return remoteABRun{}, err
	}
	defer body.Close()
	var doc struct {
		Runs []remoteABRun `json:"runs"`
	}
	if err := json.NewDecoder(body).Decode(&doc); err != nil {
		return remoteABRun{}, fmt.Errorf("read its report: %w", err)
	}
	if len(doc.Runs) != 1 || doc.Runs[0].Result == nil {
		return remoteABRun{}, errors.New("its report has " + strconv.Itoa(len(doc.Runs)) + " runs, want one")
	}
	return doc.Runs[0], nil
}

// writeRemoteAB prints the merged result in the format the command line
// asked for, as a local run does.
func writeRemoteAB(a *abcmd.AB, r *abreport.Report, stdout io.Writer) error {
	switch a.Format {
	case abcmd.FormatJSON:
		return abreport.WriteJSON(stdout, r)
	case abcmd.FormatHTTPLoad:
		return abreport.WriteHTTPLoad(stdout, r)
	}
	if err := abreport.WriteABBanner(stdout, a.Host()); err != nil {
		return err
	}
	// ab -q's lines: the heartbeat happened on the workers.
	hb := abreport.NewHeartbeat(stdout, io.Discard, a.Plan.Requests, true)
	_ = hb.Start()
	_ = hb.Finish(r.CompleteRequests)
	return abreport.WriteAB(stdout, r, abreport.TextOptions{NoConfidence: a.NoConfidence, NoPercentiles: a.NoPercentiles})
}
