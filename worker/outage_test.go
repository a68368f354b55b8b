package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

func TestThroughOutage(t *testing.T) {
	unavailable := fmt.Errorf("store: update job: %w", store.ErrUnavailable)
	tests := []struct {
		name      string
		fails     int // writes failing with unavailable before one succeeds
		other     error
		bound     time.Duration
		wantErr   error
		wantCalls int
	}{
		{name: "first write succeeds", wantCalls: 1, bound: time.Second},
		{name: "Redis back after three tries", fails: 3, wantCalls: 4, bound: 5 * time.Second},
		{name: "outage longer than the bound", fails: 1000, wantErr: store.ErrUnavailable, bound: 250 * time.Millisecond},
		{name: "other errors are not retried", other: job.ErrStaleAttempt, wantErr: job.ErrStaleAttempt, wantCalls: 1, bound: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := throughOutage(t.Context(), tt.bound, func(ctx context.Context) error {
				calls++
				if _, ok := ctx.Deadline(); !ok {
					t.Error("write's context has no deadline")
				}
				switch {
				case tt.other != nil:
					return tt.other
				case calls <= tt.fails:
					return unavailable
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantCalls > 0 && calls != tt.wantCalls {
				t.Errorf("writes = %d, want %d", calls, tt.wantCalls)
			}
			if tt.wantCalls == 0 && calls < 2 {
				t.Errorf("writes = %d, want retries until the bound", calls)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	outage := fmt.Errorf("worker: job x: %w", fmt.Errorf("store: save run: %w", store.ErrUnavailable))
	tests := []struct {
		name     string
		n        int
		err      error
		min, max time.Duration
	}{
		{"hand-back", 7, ErrHandedBack, handBackDelay, handBackDelay},
		{"worker died", 9, asynq.ErrLeaseExpired, handBackDelay, handBackDelay},
		{"first retry after an outage", 0, outage, handBackDelay, handBackDelay},
		{"third retry after an outage", 2, outage, 3 * handBackDelay, 3 * handBackDelay},
		{"many retries after outages", 20, outage, outageRetryCap, outageRetryCap},
		{"any other failure backs off as asynq does", 3, errors.New("engine broke"), 15 * time.Second, time.Hour},
	}
	for _, tt := range tests {
		if got := retryDelay(tt.n, tt.err, nil); got < tt.min || got > tt.max {
			t.Errorf("%s: retryDelay(%d) = %v, want %v..%v", tt.name, tt.n, got, tt.min, tt.max)
		}
	}
}
