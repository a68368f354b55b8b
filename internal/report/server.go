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

// writeServerLine writes, after a run's ab text, what its monitor said of
// the server's CPU: "Server CPU: 0.97 of 1 core busy (97 %), 1.69 ms per
// request". After everything ab prints, so a parser of ab's lines meets
// only lines it knows before it.
func writeServerLine(w io.Writer, r *job.Run) error {
	s := r.Server
	if s == nil || s.CoresBusy == nil {
		return nil
	}
	line := "Server CPU: " + strconv.FormatFloat(math.Round(*s.CoresBusy*100)/100, 'f', -1, 64)
	if s.Cores > 0 {
		unit := "cores"
		if s.Cores == 1 {
			unit = "core"
		}
		line += " of " + strconv.FormatFloat(s.Cores, 'f', -1, 64) + " " + unit
	} else {
		line += " cores"
	}
	line += " busy"
	if s.CPUShare != nil {
		line += fmt.Sprintf(" (%.0f %%)", *s.CPUShare*100)
	}
	if s.CPUMsPerRequest != nil {
		line += fmt.Sprintf(", %.3g ms per request", *s.CPUMsPerRequest)
	}
	if st := s.Settled; st != nil {
		if st.Quiet {
			line += fmt.Sprintf("; began on a quiet server after %.3g s", st.WaitedS)
		} else {
			line += "; began on a busy server"
		}
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
