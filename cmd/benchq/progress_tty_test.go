package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/creack/pty"
)

// TestSubmitProgressBarInTerminal runs the built binary under a pseudo-
// terminal: the progress bar must be drawn (runs counter, percent, \r
// redraws) and the outcome must still be the exit status.
func TestSubmitProgressBarInTerminal(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	bin := buildBenchq(t)
	// 4 runs of half a second: long enough for several redraws.
	spec := writeSpec(t, map[string]any{
		"targets":    []map[string]string{{"name": "t", "url": tg.URL}},
		"sweep":      map[string]any{"concurrency": []int{1, 2}, "duration": []string{"500ms"}, "repeats": 2},
		"thresholds": []string{"rps >= 1e12"},
	})
	cmd := exec.Command(bin, "submit", spec, "--wait", "--server", m.URL())
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 140})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&out, ptmx) // ends with EIO once the child exits
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("benchq submit --wait under a terminal still running after 60 s")
	}
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		t.Fatal("terminal output not drained 5 s after exit")
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != clicmd.ExitThresholdFailed {
		t.Errorf("exit = %v, want status %d (threshold failed)", werr, clicmd.ExitThresholdFailed)
	}
	s := out.String()
	for _, re := range []string{`\r`, `\d+% \|`, `\([0-4]/4`, `█`, `4/4`, `## Verdict: fail`} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("terminal output lacks %s:\n%q", re, tail(s, 3000))
		}
	}
	if n := strings.Count(s, "\r"); n < 3 {
		t.Errorf("terminal output has %d redraws, want several", n)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
