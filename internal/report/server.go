package report

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// serverCPUCell is the target's CPU beside a point's req/s: the share of
// its cores it kept busy ("cpu 97 %"), or, its cores unknown, how many it
// kept busy ("cpu 1.2 cores"); "" without a monitor.
func serverCPUCell(ps *job.PointSummary) string {
	switch {
	case ps == nil:
		return ""
	case ps.ServerCPUShare != nil:
		return fmt.Sprintf("cpu %.0f %%", ps.ServerCPUShare.Mean*100)
	case ps.ServerCoresBusy != nil:
		return "cpu " + strconv.FormatFloat(math.Round(ps.ServerCoresBusy.Mean*100)/100, 'f', -1, 64) + " cores"
	}
	return ""
}

// serverNote is the legend of the cpu annotation.
func serverNote() string {
	return fmt.Sprintf("cpu: the share of the server's cores it kept busy over the run (read from the target's monitor endpoint); from %.0f %% the server's CPU is the limit.",
		analysis.ServerCPUBound*100)
}

// writeServerCPU writes seed 004's "cpu N%" line above a run's http_load
// summary: the share of the server's cores the run kept busy, when its
// monitor told.
func writeServerCPU(w io.Writer, r *job.Run) error {
	if r.Server == nil || r.Server.CPUShare == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "cpu %.0f%%\n", *r.Server.CPUShare*100)
	return err
}
