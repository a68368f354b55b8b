package report

import (
	"fmt"
	"io"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// writeAB prints every run's ab report, each under its header line and
// separated by a blank line, so a script that splits on the headers gets
// text it already knows how to parse; a monitored run's server CPU
// follows ab's text, as the client's warning does.
func writeAB(w io.Writer, j *job.Job, runs []job.Run) error {
	return writeEach(w, j, runs, func(w io.Writer, r *job.Run) error {
		if err := abreport.WriteAB(w, r.Result, abreport.TextOptions{}); err != nil {
			return err
		}
		return writeServerLine(w, r) // server.go
	})
}

// writeHTTPLoad is writeAB with http_load's summary per run, under seed
// 004's "cpu N%" line where the server's CPU is known.
func writeHTTPLoad(w io.Writer, j *job.Job, runs []job.Run) error {
	return writeEach(w, j, runs, func(w io.Writer, r *job.Run) error {
		if err := writeServerCPU(w, r); err != nil { // server.go
			return err
		}
		return abreport.WriteHTTPLoad(w, r.Result)
	})
}

func writeEach(w io.Writer, j *job.Job, runs []job.Run, render func(io.Writer, *job.Run) error) error {
	for i, v := range runViews(j, runs) {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(w, v.header()); err != nil {
			return err
		}
		if err := render(w, &v.Run); err != nil {
			return fmt.Errorf("point %d repeat %d: %w", v.Point.Index, v.Repeat, err)
		}
	}
	return nil
}
