package main

import (
	"bytes"
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/testservers"
)

// TestGetAndCancel runs `benchq get` and `benchq cancel` against the
// all-in-one service through a job's life: running, canceled, gone.
func TestGetAndCancel(t *testing.T) {
	m := startMain(t, nil)
	tg := testservers.StartTarget(t, "x", 0)
	long := submit(t, m.URL(), map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "duration": []string{"60s"}},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	srv := []string{"--server", m.URL()}
	tests := []struct {
		name   string
		args   []string
		want   int
		stdout *regexp.Regexp
	}{
		{"get", append([]string{"get", long.ID}, srv...), clicmd.ExitOK, regexp.MustCompile(`^` + long.ID + `  (queued|running)  0/1 runs`)},
		{"get --json", append([]string{"get", long.ID, "--json"}, srv...), clicmd.ExitOK, regexp.MustCompile(`"id":\s*"` + long.ID + `"`)},
		{"cancel", append([]string{"cancel", long.ID}, srv...), clicmd.ExitOK, regexp.MustCompile(`^` + long.ID + `  (canceled|(queued|running)  .*cancel requested)`)},
		{"get unknown", append([]string{"get", "job_missing"}, srv...), clicmd.ExitError, nil},
		{"get no id", append([]string{"get"}, srv...), clicmd.ExitError, nil},
		{"get unreachable", []string{"get", long.ID, "--server", closed}, clicmd.ExitError, nil},
		{"cancel unknown", append([]string{"cancel", "job_missing"}, srv...), clicmd.ExitError, nil},
		{"cancel two ids", append([]string{"cancel", "a", "b"}, srv...), clicmd.ExitError, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(t.Context(), tt.args, nil, &stdout, &stderr); got != tt.want {
				t.Fatalf("benchq %q = exit %d (%s), want %d", tt.args, got, stderr.String(), tt.want)
			}
			if tt.stdout == nil {
				if stdout.Len() != 0 || stderr.Len() == 0 {
					t.Errorf("benchq %q: stdout %q, stderr %q; want only an error on stderr", tt.args, stdout.String(), stderr.String())
				}
				return
			}
			if !tt.stdout.MatchString(stdout.String()) {
				t.Errorf("benchq %q stdout = %q, want a match for %s", tt.args, stdout.String(), tt.stdout)
			}
		})
	}
	t.Run("get --json parses", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		run(t.Context(), append([]string{"get", "--json", long.ID}, srv...), nil, &stdout, &stderr)
		var j apiJob
		if err := json.Unmarshal(stdout.Bytes(), &j); err != nil || j.ID != long.ID {
			t.Errorf("get --json = %q (%v), want the job's JSON", stdout.String(), err)
		}
	})
	t.Run("cancel a finished job", func(t *testing.T) {
		if j := waitJob(t, m.URL(), long.ID, 20*time.Second); j.Status != "canceled" {
			t.Fatalf("job ended %s, want canceled", j.Status)
		}
		var stdout, stderr bytes.Buffer
		args := append([]string{"cancel", long.ID}, srv...)
		if got := run(t.Context(), args, nil, &stdout, &stderr); got != clicmd.ExitJobEnded {
			t.Errorf("benchq %q = exit %d, want %d", args, got, clicmd.ExitJobEnded)
		}
		if !strings.Contains(stderr.String(), "already finished") {
			t.Errorf("stderr = %q, want it to say the job already finished", stderr.String())
		}
	})
}
