package clicmd

import (
	"testing"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
)

func TestStatusLineSaysWhyAJobWaits(t *testing.T) {
	const why = "waiting for target 127.0.0.1:8080, held by job J1"
	tests := []struct {
		name string
		j    client.Job
		want string
	}{
		{"queued, waiting for a host", client.Job{ID: "J2", Status: job.StatusQueued, QueuedReason: why, Progress: job.Progress{RunsTotal: 2}},
			"J2  queued  0/2 runs  " + why},
		{"queued, no reason yet", client.Job{ID: "J2", Status: job.StatusQueued, Progress: job.Progress{RunsTotal: 2}},
			"J2  queued  0/2 runs"},
		{"a stale reason is not shown once it runs", client.Job{ID: "J2", Status: job.StatusRunning, QueuedReason: why, Progress: job.Progress{RunsTotal: 2}},
			"J2  running  0/2 runs  0 requests in this run  0 req/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := statusLine(tt.j); got != tt.want {
				t.Errorf("statusLine = %q, want %q", got, tt.want)
			}
		})
	}
}
