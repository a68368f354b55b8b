package report

import (
	"fmt"
	"io"

	"github.com/benchq/benchq/internal/job"
)

// abortedTable lists the runs a threshold marked "abort" ended early: the
// run, the threshold as the spec wrote it, and what the run had measured
// when it was certainly broken. nil when no run was aborted.
func abortedTable(j *job.Job, runs []job.Run) *Table {
	t := &Table{Caption: "runs ended early by a threshold marked to abort",
		Head: []string{"target", "point", "repeat", "aborted by", "reason"},
		Note: "An aborted run's results cover what it measured until it stopped; the verdict fails its threshold."}
	for _, v := range runViews(j, runs) {
		if !v.Aborted {
			continue
		}
		t.Rows = append(t.Rows, []string{v.Point.Target, concLabel(v.Point.Concurrency) + ", " + stopFlag(v.Point),
			fmt.Sprintf("%d/%d", v.Repeat+1, max(v.Repeats, 1)), v.AbortedBy, v.AbortReason})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// writeMDAborted prints the aborted runs' table.
func writeMDAborted(w io.Writer, j *job.Job, runs []job.Run) {
	t := abortedTable(j, runs)
	if t == nil {
		return
	}
	fmt.Fprintf(w, "\n## Aborted runs\n\n%s.\n\n", plural(len(t.Rows), "run")+" ended early by a threshold marked to abort")
	writeMDRows(w, t, false)
	fmt.Fprintf(w, "\n%s\n", t.Note)
}
