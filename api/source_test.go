package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/testservers"
)

// takenQueue stands for an enqueue whose answer was lost after a worker
// took the job: the job is running, yet the enqueue reports a failure.
// The creation is then answered as failed and its discard leaves the job
// alone, logging what started it.
type takenQueue struct{ store *fakeStore }

func (q takenQueue) EnqueueContext(ctx context.Context, _ *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.store.mu.Lock()
	defer q.store.mu.Unlock()
	for _, j := range q.store.jobs {
		j.Status = job.StatusRunning
	}
	return nil, errors.New("enqueue: answer lost")
}

// TestCreationNamesItsSource: a job created through POST /v1/jobs is
// logged as the request's, one the dashboard's form created as the
// dashboard's, though the form calls the same POST /v1/jobs in process.
func TestCreationNamesItsSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(t *testing.T, base string) *http.Response
		want string
	}{
		{"api", func(t *testing.T, base string) *http.Response {
			resp, _ := send(t, base, http.MethodPost, "/v1/jobs", okSpec, map[string]string{"Content-Type": "application/json"})
			return resp
		}, `source="request `},
		{"dashboard", func(t *testing.T, base string) *http.Response {
			form := url.Values{"targets[0].url": {"http://127.0.0.1:9/"}, "sweep.concurrency": {"2"}, "stop": {"requests"}, "sweep.requests": {"10"}}
			resp, _ := send(t, base, http.MethodPost, "/ui/new", form.Encode(),
				map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": base})
			return resp
		}, `source="dashboard request `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logbuf.Buffer
			st := newFakeStore()
			srv := New(Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly, Logger: slog.New(slog.NewTextHandler(&logs, nil))},
				Deps{Store: st, Queue: takenQueue{st}})
			hs := httptest.NewServer(srv.Handler())
			t.Cleanup(hs.Close)
			if resp := tc.send(t, hs.URL); resp.StatusCode < 400 {
				t.Fatalf("creation with a lost enqueue answer = %d, want an error", resp.StatusCode)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(logs.String(), "taken by a worker") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "taken by a worker") {
					line = l
				}
			}
			if !strings.Contains(line, tc.want) {
				t.Errorf("log of the discard = %q, want the source %q in it (logs %s)", line, tc.want, logs.String())
			}
		})
	}
}
