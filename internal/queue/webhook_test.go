package queue

import (
	"errors"
	"testing"

	"github.com/hibiken/asynq"
)

func TestWebhookDeliverRoundTrip(t *testing.T) {
	task, err := NewWebhookDeliverTask("01JABCDEFGHJKMNPQRSTVWXYZ0", 3, 9)
	if err != nil {
		t.Fatalf("NewWebhookDeliverTask = %v", err)
	}
	got, err := ParseWebhookDeliver(task)
	if err != nil || got.JobID != "01JABCDEFGHJKMNPQRSTVWXYZ0" || got.Delivery != 3 {
		t.Errorf("ParseWebhookDeliver = %+v, %v, want job id and delivery 3", got, err)
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
	if _, err := NewWebhookDeliverTask("", 1, 1); !errors.Is(err, ErrBadPayload) {
		t.Errorf("NewWebhookDeliverTask(\"\") = %v, want ErrBadPayload", err)
	}
}
