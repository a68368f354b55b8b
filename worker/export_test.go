package worker

import (
	"context"
	"testing"
)

// RunInTest runs w until the test ends, then cancels it and waits for
// Run to return, failing the test on its error.
func RunInTest(t testing.TB, w *Worker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Worker.Run = %v", err)
		}
	})
}
