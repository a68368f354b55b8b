package abreport

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// ClientWarning is the line the text renderers print after the report of a
// run whose load generator was short of CPU (ClientSaturated: it used, or
// waited for, nearly all the CPU it could have used), e.g.
//
//	WARNING: the load generator was short of CPU (1.95 CPU-s used + 0.03 s waiting for a CPU, of 2.00 available): req/s measures the client, not the server
//
// and "" for any other run. It comes after everything ab prints, so a
// script that parses ab's report reads the same lines as before.
func (r *Report) ClientWarning() string {
	if !r.ClientSaturated {
		return ""
	}
	elapsed := time.Duration(math.Round(r.TimeTakenS*1e6)) * time.Microsecond
	available := measure.ClientCapacity(elapsed, r.ClientCores, r.ConcurrencyLevel)
	return fmt.Sprintf("WARNING: the load generator was short of CPU (%.2f CPU-s used + %.2f s waiting for a CPU, of %.2f available): req/s measures the client, not the server",
		r.ClientCPUS, r.ClientCPUWaitS, available.Seconds())
}

// writeClientWarning prints ClientWarning's and UnsteadyNote's lines, if
// any.
func writeClientWarning(w io.Writer, r *Report) {
	if s := r.ClientWarning(); s != "" {
		fmt.Fprintln(w, s)
	}
	if s := r.UnsteadyNote(); s != "" {
		fmt.Fprintln(w, s)
	}
}

// UnsteadyNote is the line the text renderers print after the report of a
// run marked Unsteady, e.g.
//
//	NOTE: the run was unsteady (p50 rose 18× from 1.1 ms to 20 ms between 2 s and 4 s of the run, and came back): its averages mix two behaviours
//
// and "" for any other run; like ClientWarning it comes after everything
// ab prints.
func (r *Report) UnsteadyNote() string {
	if !r.Unsteady {
		return ""
	}
	return fmt.Sprintf("NOTE: the run was unsteady (%s): its averages mix two behaviours", r.UnsteadyReason)
}
