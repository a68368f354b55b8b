package queue

import (
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
)

func TestWebhookDeliverRoundTrip(t *testing.T) {
	task, err := NewWebhookDeliverTask("01JABCDEFGHJKMNPQRSTVWXYZ0", "key-1", 3, 0, 9)
	if err != nil {
		t.Fatalf("NewWebhookDeliverTask = %v", err)
	}
	got, err := ParseWebhookDeliver(task)
	if err != nil || got.JobID != "01JABCDEFGHJKMNPQRSTVWXYZ0" || got.Delivery != 3 || got.Owner != "key-1" {
		t.Errorf("ParseWebhookDeliver = %+v, %v, want job id, delivery 3, owner key-1", got, err)
	}
	// A task enqueued before tasks named their owner still parses.
	old, err := ParseWebhookDeliver(asynq.NewTask(TypeWebhookDeliver, []byte(`{"job_id":"x","delivery":1}`)))
	if err != nil || old.Owner != "" {
		t.Errorf("ParseWebhookDeliver(no owner) = %+v, %v; want no owner", old, err)
	}
}

func TestParseWebhookDeliverRefusesBadPayloads(t *testing.T) {
	tests := []struct{ name, typ, payload string }{
		{"wrong type", TypeJobRun, `{"job_id":"x","delivery":1}`},
		{"not json", TypeWebhookDeliver, `x`},
		{"no delivery", TypeWebhookDeliver, `{"job_id":"x"}`},
		{"zero delivery", TypeWebhookDeliver, `{"job_id":"x","delivery":0}`},
		{"no job", TypeWebhookDeliver, `{"delivery":1}`},
		{"unknown field", TypeWebhookDeliver, `{"job_id":"x","delivery":1,"url":"http://x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseWebhookDeliver(asynq.NewTask(tt.typ, []byte(tt.payload))); !errors.Is(err, ErrBadPayload) {
				t.Errorf("ParseWebhookDeliver(%s %s) = %v, want ErrBadPayload", tt.typ, tt.payload, err)
			}
		})
	}
	if _, err := NewWebhookDeliverTask("", "", 1, 0, 1); !errors.Is(err, ErrBadPayload) {
		t.Errorf("NewWebhookDeliverTask(\"\") = %v, want ErrBadPayload", err)
	}
	if _, err := NewWebhookDeliverTask("x", "", 1, -1, 1); !errors.Is(err, ErrBadPayload) {
		t.Errorf("NewWebhookDeliverTask(round -1) = %v, want ErrBadPayload", err)
	}
}

// TestWebhookDeliverTaskIDs: the same round of a delivery is enqueued at
// most once while its task lives; the next round (a redelivery) and
// another delivery are new tasks.
func TestWebhookDeliverTaskIDs(t *testing.T) {
	mr := miniredis.RunT(t)
	c := asynq.NewClient(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	tests := []struct {
		name     string
		n, round int
		conflict bool
	}{
		{"first", 1, 0, false},
		{"same round again", 1, 0, true},
		{"redelivery", 1, 1, false},
		{"redelivery again", 1, 1, true},
		{"another delivery", 2, 0, false},
	}
	for _, tt := range tests {
		task, err := NewWebhookDeliverTask("01JABCDEFGHJKMNPQRSTVWXYZ0", "", tt.n, tt.round, 3)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Enqueue(task)
		if got := errors.Is(err, asynq.ErrTaskIDConflict); got != tt.conflict {
			t.Errorf("%s: Enqueue = %v, want conflict %v", tt.name, err, tt.conflict)
		}
		if err == nil && info.ID != WebhookDeliverTaskID("01JABCDEFGHJKMNPQRSTVWXYZ0", tt.n, tt.round) {
			t.Errorf("%s: task id %q", tt.name, info.ID)
		}
	}
}
