package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/targetverify"
	"github.com/benchq/benchq/worker"
)

// stubTargets answers every check with err and records what it saw.
type stubTargets struct {
	err     error
	owner   string
	targets []job.TargetURL
}

func (s *stubTargets) CheckSpec(_ context.Context, owner string, targets []job.TargetURL) error {
	s.owner, s.targets = owner, targets
	return s.err
}

func TestTargetCheckBeforeAnyLoad(t *testing.T) {
	unverified := fmt.Errorf("%w: %w", targetverify.ErrUnverified,
		&job.ValidationError{Problems: []job.FieldError{{Field: "targets[0].url", Message: "host is not verified for this API key"}}})
	tests := []struct {
		name       string
		err        error
		wantStatus job.Status
		wantRetry  bool // a handler error asynq retries
		wantLoad   bool
	}{
		{"verified", nil, job.StatusSucceeded, false, true},
		{"token withdrawn", unverified, job.StatusFailed, false, false},
		{"store down", errors.New("redis: connection refused"), job.StatusRunning, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tg := startTarget(t, 0)
			j, task := e.create(t, closedSpec([]int{1}, []int{20}, 1, tg))
			check := &stubTargets{err: tt.err}
			r := worker.NewRunner(e.st, worker.Config{Logger: e.log, Targets: check})
			err := r.HandleJobRun(t.Context(), task)
			if retry := err != nil && !errors.Is(err, asynq.SkipRetry); retry != tt.wantRetry {
				t.Errorf("HandleJobRun = %v; retried %v, want %v", err, retry, tt.wantRetry)
			}
			got, _ := e.st.GetJob(t.Context(), j.ID)
			if got.Status != tt.wantStatus {
				t.Errorf("job status = %s (%q), want %s", got.Status, got.Error, tt.wantStatus)
			}
			if tt.err != nil && tt.wantStatus == job.StatusFailed && !strings.Contains(got.Error, "not verified") {
				t.Errorf("job error = %q, want the verification failure", got.Error)
			}
			if hits := tg.hits.Load(); (hits > 0) != tt.wantLoad {
				t.Errorf("target got %d requests, want load %v", hits, tt.wantLoad)
			}
			if len(check.targets) != 1 || check.targets[0].URL != tg.url || check.owner != j.Owner {
				t.Errorf("checked %q %+v, want the job's owner and its one target URL", check.owner, check.targets)
			}
		})
	}
}

var _ worker.TargetChecker = (*targetverify.Verifier)(nil)
