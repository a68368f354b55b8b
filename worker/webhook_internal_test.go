package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
	"github.com/benchq/benchq/internal/webhook"
)

func TestNotBefore(t *testing.T) {
	tests := []struct {
		now  string
		d    time.Duration
		want time.Duration
	}{
		{"10:00:00.000", time.Second, time.Second},
		{"10:00:00.250", time.Second, 1750 * time.Millisecond},
		{"10:00:00.999", 0, time.Millisecond},
		{"10:00:00.500", 2500 * time.Millisecond, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		now, err := time.Parse("15:04:05.000", tt.now)
		if err != nil {
			t.Fatal(err)
		}
		got := notBefore(now, tt.d)
		if got != tt.want {
			t.Errorf("notBefore(%s, %v) = %v, want %v", tt.now, tt.d, got, tt.want)
		}
		if end := now.Add(got); end.Unix() < now.Add(tt.d).Unix() || end.Before(now.Add(tt.d)) || end.Nanosecond() != 0 {
			t.Errorf("notBefore(%s, %v) ends at %v, want the first whole second at or after now+d", tt.now, tt.d, end)
		}
	}
}

func TestRetryDelayHonoursRetryAfterBeyondSchedule(t *testing.T) {
	d := &Deliverer{schedule: webhook.Schedule{time.Second, 2 * time.Second, 5 * time.Second}}
	tests := []struct {
		name     string
		retried  int
		err      error
		min, max time.Duration
	}{
		{"no Retry-After: the schedule", 0, &attemptError{}, 900 * time.Millisecond, 1100 * time.Millisecond},
		{"Retry-After below the schedule's wait", 1, &attemptError{retryAfter: time.Second}, 1800 * time.Millisecond, 2200 * time.Millisecond},
		{"Retry-After above the schedule's longest wait", 0, &attemptError{retryAfter: time.Minute}, time.Minute, time.Minute + time.Second},
		{"Retry-After past the cap", 0, &attemptError{retryAfter: 48 * time.Hour}, webhook.MaxRetryAfter, webhook.MaxRetryAfter + time.Second},
		{"not an attempt (Redis)", 2, errors.New("i/o timeout"), 4500 * time.Millisecond, 5500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.retryDelay(tt.retried, tt.err, nil); got < tt.min || got > tt.max {
				t.Errorf("retryDelay = %v, want %v..%v", got, tt.min, tt.max)
			}
		})
	}
}

// fakeDeliveries is a deliveryStore holding one delivery.
type fakeDeliveries struct {
	del       webhook.Delivery
	secret    string
	secretErr error
	attempts  int
}

func (f *fakeDeliveries) Delivery(context.Context, string, int) (*webhook.Delivery, error) {
	d := f.del
	return &d, nil
}

func (f *fakeDeliveries) WebhookSecret(context.Context, string) (string, error) {
	return f.secret, f.secretErr
}

func (f *fakeDeliveries) AppendAttempt(_ context.Context, _ string, _ int, a *webhook.Attempt) error {
	f.attempts++
	a.N = f.attempts
	return nil
}

func (f *fakeDeliveries) Deliveries(context.Context, string) ([]store.DeliveryLog, error) {
	return []store.DeliveryLog{{Delivery: f.del}}, nil
}

func (f *fakeDeliveries) GetTemplate(context.Context, string, string) (*template.Template, error) {
	return nil, store.ErrNotFound
}

func (f *fakeDeliveries) LockForgeComment(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}

func (f *fakeDeliveries) UnlockForgeComment(context.Context, string, string) error { return nil }

func (f *fakeDeliveries) UpdateDelivery(_ context.Context, _ string, _ int, fn func(*webhook.Delivery) error) (*webhook.Delivery, error) {
	if err := fn(&f.del); err != nil {
		return nil, err
	}
	d := f.del
	return &d, nil
}

// TestDeliverSecretProblems: only a secret that is gone or unusable fails
// a delivery for good; a Redis error reading it is retried, and the
// delivery stays in flight. None of these sends anything.
func TestDeliverSecretProblems(t *testing.T) {
	tests := []struct {
		name       string
		secret     string
		secretErr  error
		status     webhook.Status
		wantSkip   bool
		wantStatus webhook.Status
	}{
		{"secret gone", "", fmt.Errorf("store: webhook secret: %w", store.ErrNotFound), webhook.StatusPending, true, webhook.StatusFailed},
		{"bad secret", "whsec_c2hvcnQ=", nil, webhook.StatusPending, true, webhook.StatusFailed},
		{"redis blip", "", errors.New("store: webhook secret: dial tcp: i/o timeout"), webhook.StatusPending, false, webhook.StatusPending},
		{"redis blip while retrying", "", errors.New("store: webhook secret: READONLY"), webhook.StatusRetrying, false, webhook.StatusRetrying},
		{"already delivered", webhook.NewSecret(), nil, webhook.StatusDelivered, false, webhook.StatusDelivered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeDeliveries{
				// Port 9 on loopback: never dialed, since no case sends.
				del:    webhook.Delivery{JobID: "j1", N: 1, ID: webhook.MessageID("j1", "job.succeeded"), URL: "http://127.0.0.1:9/", Status: tt.status, MaxRetry: 3},
				secret: tt.secret, secretErr: tt.secretErr,
			}
			d := newDeliverer(st, WebhookConfig{Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}.withDefaults())
			task, err := queue.NewWebhookDeliverTask("j1", "", 1, 0, 3)
			if err != nil {
				t.Fatal(err)
			}
			err = d.HandleWebhookDeliver(t.Context(), task)
			if skip := errors.Is(err, asynq.SkipRetry); skip != tt.wantSkip || (tt.status != webhook.StatusDelivered) != (err != nil) {
				t.Errorf("HandleWebhookDeliver = %v, want skip-retry %v", err, tt.wantSkip)
			}
			if st.del.Status != tt.wantStatus || st.attempts != 0 {
				t.Errorf("delivery %s after %d attempts, want %s after none", st.del.Status, st.attempts, tt.wantStatus)
			}
		})
	}
}
