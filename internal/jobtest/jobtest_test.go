package jobtest

import (
	"errors"
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
)

// TestQueue: tasks are recorded in order and read back as their jobs;
// while SetErr holds an error nothing is recorded.
func TestQueue(t *testing.T) {
	var q Queue
	enqueue := func(id string) error {
		task, err := queue.NewJobRunTask(id, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = q.EnqueueContext(t.Context(), task)
		return err
	}
	if err := enqueue("a"); err != nil {
		t.Fatalf("EnqueueContext = %v", err)
	}
	down := errors.New("queue down")
	q.SetErr(down)
	if err := enqueue("b"); !errors.Is(err, down) {
		t.Errorf("EnqueueContext with SetErr = %v, want %v", err, down)
	}
	q.SetErr(nil)
	if err := enqueue("c"); err != nil {
		t.Fatalf("EnqueueContext after SetErr(nil) = %v", err)
	}
	if got := q.JobIDs(t); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("JobIDs = %v, want [a c]", got)
	}
}

// TestSweepSpecIsValid: the spec the tests build passes validation with
// its targets named and apart.
func TestSweepSpecIsValid(t *testing.T) {
	s := SweepSpec([]int{1, 4}, "a", "b")
	if err := s.WithDefaults().Validate(job.DefaultLimits(), nil); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	if len(s.Targets) != 2 || s.Targets[0].URL == s.Targets[1].URL || len(s.Schedule()) != 4 {
		t.Errorf("spec = %+v, want 2 targets on 2 URLs and 4 runs", s)
	}
}
