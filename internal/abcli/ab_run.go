package abcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/benchq/benchq/internal/abcmd"
	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
)

// abBench runs the plan and prints ab's progress and report. ab's split is
// kept: banner, "..done" and the report on stdout; "Completed N requests",
// "Finished N requests" and fatal errors on stderr. With --json or
// --format http_load stdout carries the report alone.
func abBench(ctx context.Context, a *abcmd.AB, stdout, stderr io.Writer) int {
	lead := io.Discard // where the banner and "..done" go
	if a.Format == abcmd.FormatAB {
		lead = stdout
		_ = abreport.WriteABBanner(stdout, a.Host())
	}
	hb := abreport.NewHeartbeat(lead, stderr, a.Plan.Requests, a.Quiet)
	_ = hb.Start()
	// Progress is called from one goroutine, and never after Run returns,
	// so the heartbeat needs no lock.
	a.Plan.Progress = func(s measure.Snapshot) { _ = hb.Progress(s.Completed) }
	m, err := loadgen.Run(ctx, a.Plan)
	if err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	if m.Aborted != "" {
		return abAborted(m, stderr)
	}
	if m.Canceled {
		// ab's SIGINT handler prints the report at once: no "Finished"
		// line, but every step reached so far has been announced.
		_ = hb.Progress(m.Complete)
		fmt.Fprint(lead, "\n\n")
	} else {
		_ = hb.Finish(m.Complete)
	}
	if err := writeABOutputs(a, m, stdout); err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	if m.Canceled {
		return abExitErr
	}
	return abExitOK
}

// abAborted prints why the run stopped where ab would have stopped, in
// ab's words when it has them, and returns ab's exit status.
func abAborted(m *measure.Measurement, stderr io.Writer) int {
	if strings.Contains(strings.ToLower(m.Aborted), "connection refused") {
		fmt.Fprintln(stderr, "apr_socket_recv: Connection refused (111)")
		return abExitRefused
	}
	// "SSL handshake failed (N): cause": ab's line, then the cause and the
	// hint where ab dumps OpenSSL's error queue.
	if head, cause, ok := strings.Cut(m.Aborted, ": "); ok && strings.HasPrefix(head, "SSL handshake failed (") {
		fmt.Fprintf(stderr, "%s.\n", head)
		fmt.Fprintf(stderr, "benchq ab: %s\n", cause)
		for _, h := range m.Hints() {
			fmt.Fprintf(stderr, "benchq ab: %s\n", h)
		}
		return abExitErr
	}
	fmt.Fprintf(stderr, "benchq ab: run aborted: %s\n", m.Aborted)
	return abExitErr
}

// writeABOutputs prints the report in the chosen format and writes the
// -e and -g files, which ab writes only when a request completed.
func writeABOutputs(a *abcmd.AB, m *measure.Measurement, stdout io.Writer) error {
	r := abreport.FromMeasurement(m, abreport.Options{
		VariableLength: a.Plan.AcceptVariableLength,
		BodySent:       a.BodyFile != "",
	})
	var err error
	switch a.Format {
	case abcmd.FormatJSON:
		err = abreport.WriteJSON(stdout, r)
	case abcmd.FormatHTTPLoad:
		err = abreport.WriteHTTPLoad(stdout, r)
	default:
		err = abreport.WriteAB(stdout, r, abreport.TextOptions{
			NoConfidence: a.NoConfidence, NoPercentiles: a.NoPercentiles,
		})
	}
	if err != nil {
		return err
	}
	if a.TimelineFile != "" {
		// Written whatever completed: a run that failed throughout is
		// what a timeline is read for.
		if err := writeABFile(a.TimelineFile, func(w io.Writer) error { return abreport.WriteTimelineNDJSON(w, m) }); err != nil {
			return err
		}
	}
	if m.Complete == 0 {
		return nil
	}
	if a.CSVFile != "" {
		if err := writeABFile(a.CSVFile, func(w io.Writer) error { return abreport.WriteCSV(w, r) }); err != nil {
			return err
		}
	}
	if a.GnuplotFile != "" {
		return writeABFile(a.GnuplotFile, func(w io.Writer) error { return abreport.WriteGnuplot(w, m.Samples) })
	}
	return nil
}

// writeABFile creates path and fills it with write.
func writeABFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
