package abreport

import (
	"fmt"
	"io"
)

// WriteABBanner writes what ab prints before a run: its version banner (as
// Debian's ab 2.3 prints it), a blank line, and "Benchmarking HOST (be
// patient)" left open; Heartbeat.Start ends that line.
func WriteABBanner(w io.Writer, host string) error {
	_, err := fmt.Fprintf(w, "This is ApacheBench, Version 2.3 <$Revision$>\n"+
		"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n"+
		"Licensed to The Apache Software Foundation, http://www.apache.org/\n"+
		"\n"+
		"Benchmarking %s (be patient)", host)
	if err != nil {
		return fmt.Errorf("abreport: write ab banner: %w", err)
	}
	return nil
}

// HeartbeatStep is how often ab reports progress for a run of n requests:
// every max(n/10, 100) completions when n > 150, never (0) otherwise. With
// -t, ab's n is 50000 unless -n came after it.
func HeartbeatStep(n int) int {
	if n <= 150 {
		return 0
	}
	return max(n/10, 100)
}

// Heartbeat prints ab's progress around a run: "Completed N requests" on
// stderr at every step, "Finished N requests" at the end; or, when there is
// no heartbeat (-q, or n ≤ 150), "..." after the banner and "..done" on
// stdout. Not safe for concurrent use: call it from the goroutine that reads
// the run's progress.
type Heartbeat struct {
	stdout, stderr io.Writer
	step           int64
	reported       int64 // last multiple of step printed
}

// NewHeartbeat prepares the progress output of a run of n requests; quiet
// is ab -q.
func NewHeartbeat(stdout, stderr io.Writer, n int, quiet bool) *Heartbeat {
	h := &Heartbeat{stdout: stdout, stderr: stderr}
	if !quiet {
		h.step = int64(HeartbeatStep(n))
	}
	return h
}

// Start ends the "Benchmarking" line as ab does: a newline when progress
// lines follow, "..." otherwise.
func (h *Heartbeat) Start() error {
	end := "..."
	if h.step > 0 {
		end = "\n"
	}
	return h.write(h.stdout, end)
}

// Progress prints "Completed N requests" for every step reached since the
// last call, so a caller that samples done every 250 ms prints the same
// lines as ab, which prints at each step exactly.
func (h *Heartbeat) Progress(done int64) error {
	if h.step == 0 {
		return nil
	}
	for next := h.reported + h.step; next <= done; next += h.step {
		if err := h.write(h.stderr, fmt.Sprintf("Completed %d requests\n", next)); err != nil {
			return err
		}
		h.reported = next
	}
	return nil
}

// Finish prints the end of the progress output and the two blank lines ab
// puts before its report.
func (h *Heartbeat) Finish(done int64) error {
	if h.step > 0 {
		if err := h.Progress(done); err != nil {
			return err
		}
		if err := h.write(h.stderr, fmt.Sprintf("Finished %d requests\n", done)); err != nil {
			return err
		}
		return h.write(h.stdout, "\n\n")
	}
	return h.write(h.stdout, "..done\n\n\n")
}

func (h *Heartbeat) write(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("abreport: write progress: %w", err)
	}
	return nil
}
