package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// capacityTable is the capacity search's answer, a row per target: the
// rate with its interval, why the search ended, what limited the target
// and what the search spent.
func capacityTable(cs []job.Capacity) *Table {
	if len(cs) == 0 {
		return nil
	}
	t := &Table{Caption: "capacity: the highest rate at which every SLO held",
		Head: []string{"target", "req/s", "interval", "vs baseline", "ended", "limited by", "probes", "requests", "time"}}
	for _, c := range cs {
		rate, interval := "–", "–"
		if c.Rate > 0 {
			rate = analysis.Thousands(c.Rate)
		}
		switch {
		case c.CILow > 0 && c.CIHigh > 0:
			interval = fmt.Sprintf("[%s, %s]", analysis.Thousands(c.CILow), analysis.Thousands(c.CIHigh))
		case c.CILow > 0:
			interval = "≥ " + analysis.Thousands(c.CILow)
		case c.CIHigh > 0:
			interval = "< " + analysis.Thousands(c.CIHigh)
		}
		vs := ""
		if c.Pct != nil {
			vs = fmt.Sprintf("%+.0f %%", *c.Pct)
		}
		limited := c.LimitedBy
		if limited == "" {
			limited = "–"
		}
		t.Rows = append(t.Rows, []string{c.Target, rate, interval, vs, c.Reason, limited,
			strconv.Itoa(len(c.Probes)), strconv.FormatInt(c.Requests, 10), fmt.Sprintf("%.0f s", c.ElapsedS)})
	}
	return t
}

// writeMDCapacity prints the capacity sentence and table, then where the
// chart is: Markdown carries no image, and the report does not know the
// address it will be read from.
func writeMDCapacity(w io.Writer, jobID, sentence string, cs []job.Capacity) {
	t := capacityTable(cs)
	if t == nil {
		return
	}
	fmt.Fprintf(w, "\n## Capacity\n\n%s.\n\n", mdEscape(sentence))
	writeMDRows(w, t, true)
	fmt.Fprintf(w, "\nThe chart of each probe's p50 and p99 latency against its offered rate, with the SLO and the capacity found: `GET /v1/jobs/%s/report?format=svg&chart=capacity`.\n", jobID)
}
