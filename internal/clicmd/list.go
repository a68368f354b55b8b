package clicmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchq/benchq/internal/client"
)

const listSynopsis = `benchq list [--status S] [--label key:value]... [--name PART] [--limit N] [--cursor C] [--json] [flags]

Lists the jobs the API key may see, newest first, as a table: id, status,
runs done of runs total, verdict, created, name. Filters as GET /v1/jobs
does: --status one of queued, running, succeeded, failed, canceled;
--label repeatable, every one must match; --name a part of the name, any
case. When more jobs match than
--limit, the last line gives the --cursor of the next page. --json prints
the server's JSON page instead. Exits 0, or 3 on a usage, connection or
API error.`

// labelList is the repeatable --label flag.
type labelList []string

func (l *labelList) String() string { return strings.Join(*l, ",") }

func (l *labelList) Set(v string) error {
	if k, _, ok := strings.Cut(v, ":"); !ok || k == "" {
		return fmt.Errorf("label %q is not key:value", v)
	}
	*l = append(*l, v)
	return nil
}

// List is `benchq list`.
func List(ctx context.Context, args []string, env Env) int {
	fs := NewFlagSet("benchq list", listSynopsis, env.Stderr)
	api := AddAPIFlags(fs, env.Getenv)
	var f client.ListFilter
	var labels labelList
	fs.StringVar(&f.Status, "status", "", "only jobs in this status")
	fs.Var(&labels, "label", "only jobs with this `key:value` label; repeatable, all must match")
	fs.StringVar(&f.Name, "name", "", "only jobs whose name contains this, ignoring case")
	fs.IntVar(&f.Limit, "limit", 0, "jobs per page, 1..100 (0: the server's default, 20)")
	fs.StringVar(&f.Cursor, "cursor", "", "the page after the one that printed this cursor")
	asJSON := fs.Bool("json", false, "print the server's JSON page")
	pos, err := parseInterleaved(fs, args)
	if err == nil && len(pos) > 0 {
		fs.Usage()
		err = fmt.Errorf("takes no arguments, got %q", pos)
	}
	if err != nil {
		return UsageExit("benchq list", err, env.Stderr)
	}
	f.Labels = labels
	c, err := api.Client()
	if err != nil {
		return UsageExit("benchq list", err, env.Stderr)
	}
	page, err := c.List(ctx, f)
	if err != nil {
		fmt.Fprintf(env.Stderr, "benchq list: %v\n", err)
		return ExitError
	}
	if *asJSON {
		fmt.Fprintf(env.Stdout, "%s\n", page.Raw)
		return ExitOK
	}
	if len(page.Jobs) == 0 {
		fmt.Fprintln(env.Stderr, "benchq list: no jobs match")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tRUNS\tVERDICT\tCREATED\tNAME")
	for _, j := range page.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.Status, j.Progress.RunsDone, j.Progress.RunsTotal,
			dashIfEmpty(j.Verdict), j.CreatedAt.Local().Format(time.DateTime), dashIfEmpty(j.Spec.Name))
	}
	_ = tw.Flush()
	if page.NextCursor != "" {
		fmt.Fprintf(env.Stderr, "benchq list: more jobs: --cursor %s\n", page.NextCursor)
	}
	return ExitOK
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
