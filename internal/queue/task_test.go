package queue

import (
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/redistest"
	"github.com/hibiken/asynq"
)

func TestJobRunPayloadRoundTrip(t *testing.T) {
	task, err := NewJobRunTask("01JABCDEFGHJKMNPQRSTVWXYZ0", time.Minute)
	if err != nil {
		t.Fatalf("NewJobRunTask = %v", err)
	}
	if task.Type() != TypeJobRun {
		t.Errorf("Type() = %q, want %q", task.Type(), TypeJobRun)
	}
	got, err := ParseJobRun(task)
	if err != nil {
		t.Fatalf("ParseJobRun = %v", err)
	}
	if got.JobID != "01JABCDEFGHJKMNPQRSTVWXYZ0" {
		t.Errorf("ParseJobRun().JobID = %q, want the job id", got.JobID)
	}
}

func TestParseJobRunRefusesBadPayloads(t *testing.T) {
	tests := []struct {
		name, typ, payload string
	}{
		{"wrong type", TypeWebhookDeliver, `{"job_id":"x"}`},
		{"not json", TypeJobRun, `job_id=x`},
		{"empty id", TypeJobRun, `{"job_id":""}`},
		{"missing id", TypeJobRun, `{}`},
		{"unknown field", TypeJobRun, `{"job_id":"x","spec":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJobRun(asynq.NewTask(tt.typ, []byte(tt.payload)))
			if !errors.Is(err, ErrBadPayload) {
				t.Errorf("ParseJobRun(%s %s) = %v, want ErrBadPayload", tt.typ, tt.payload, err)
			}
		})
	}
}

func TestNewJobRunTaskRefusesEmptyID(t *testing.T) {
	if _, err := NewJobRunTask("", time.Minute); !errors.Is(err, ErrBadPayload) {
		t.Errorf("NewJobRunTask(\"\") = %v, want ErrBadPayload", err)
	}
}

func TestJobRunTimeout(t *testing.T) {
	tests := []struct {
		estimate, want time.Duration
	}{
		{0, 5 * time.Minute},
		{-time.Second, 5 * time.Minute},
		{time.Hour, 95 * time.Minute},
		{10 * time.Hour, 15*time.Hour + 5*time.Minute},
		{time.Duration(1<<63 - 1), time.Duration(1<<63 - 1)},
	}
	for _, tt := range tests {
		if got := JobRunTimeout(tt.estimate); got != tt.want {
			t.Errorf("JobRunTimeout(%v) = %v, want %v", tt.estimate, got, tt.want)
		}
	}
}

// TestEnqueueOptions enqueues into a real Redis and reads the task back as
// asynq stores it: the options must survive, and a second enqueue of the
// same job must be refused.
func TestEnqueueOptions(t *testing.T) {
	srv := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	inspector := asynq.NewInspector(opt)
	t.Cleanup(func() { _ = inspector.Close() })

	const id = "01JABCDEFGHJKMNPQRSTVWXYZ0"
	task, err := NewJobRunTask(id, 2*time.Hour)
	if err != nil {
		t.Fatalf("NewJobRunTask = %v", err)
	}
	if _, err := client.Enqueue(task); err != nil {
		t.Fatalf("Enqueue = %v", err)
	}
	info, err := inspector.GetTaskInfo(QueueJobs, id)
	if err != nil {
		t.Fatalf("GetTaskInfo(%s, %s) = %v", QueueJobs, id, err)
	}
	if info.ID != id || info.Queue != QueueJobs || info.Type != TypeJobRun {
		t.Errorf("task = id %q queue %q type %q, want %q %q %q", info.ID, info.Queue, info.Type, id, QueueJobs, TypeJobRun)
	}
	if want := 3*time.Hour + 5*time.Minute; info.Timeout != want {
		t.Errorf("Timeout = %v, want %v", info.Timeout, want)
	}
	if info.MaxRetry != MaxRetry {
		t.Errorf("MaxRetry = %d, want %d", info.MaxRetry, MaxRetry)
	}
	if info.Retention != Retention {
		t.Errorf("Retention = %v, want %v", info.Retention, Retention)
	}
	if p, err := ParseJobRun(asynq.NewTask(info.Type, info.Payload)); err != nil || p.JobID != id {
		t.Errorf("stored payload = %+v, %v, want job_id %q", p, err, id)
	}

	again, _ := NewJobRunTask(id, time.Minute)
	if _, err := client.Enqueue(again); !errors.Is(err, asynq.ErrTaskIDConflict) {
		t.Errorf("second Enqueue of job %s = %v, want asynq.ErrTaskIDConflict", id, err)
	}

	// A resume task runs the same job under a task of its own, once per
	// dead attempt however many workers noticed the death.
	resume, err := NewJobResumeTask(id, 2, 2*time.Hour)
	if err != nil {
		t.Fatalf("NewJobResumeTask = %v", err)
	}
	ri, err := client.Enqueue(resume)
	if err != nil {
		t.Fatalf("Enqueue(resume) = %v", err)
	}
	if p, err := ParseJobRun(asynq.NewTask(ri.Type, ri.Payload)); err != nil || p.JobID != id || ri.ID == id || ri.Timeout != info.Timeout {
		t.Errorf("resume task = id %q timeout %v payload %+v (%v), want its own id, timeout %v, job_id %q", ri.ID, ri.Timeout, p, err, info.Timeout, id)
	}
	twice, _ := NewJobResumeTask(id, 2, time.Minute)
	if _, err := client.Enqueue(twice); !errors.Is(err, asynq.ErrTaskIDConflict) {
		t.Errorf("second resume of attempt 2 = %v, want asynq.ErrTaskIDConflict", err)
	}
	if next, _ := NewJobResumeTask(id, 3, time.Minute); next == nil {
		t.Fatal("NewJobResumeTask(attempt 3) = nil")
	} else if _, err := client.Enqueue(next); err != nil {
		t.Errorf("resume of attempt 3 = %v, want it queued", err)
	}
}
