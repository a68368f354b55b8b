package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
)

// TestStoreOnCluster runs every kind of store operation on a 3-master
// Redis Cluster, where a WATCH, MULTI or script whose keys span slots
// fails (CROSSSLOT, or "Watch requires all keys to be in the same slot"):
// each must succeed, in the order a job's life calls them.
func TestStoreOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node Redis Cluster; skipped with -short")
	}
	cc := redistest.StartCluster(t, 3).Client(t)
	s := store.New(cc, store.Options{Retention: testRetention})
	ctx := t.Context()
	now := time.Now().UTC()
	key, _, err := apikey.New("ci", false, apikey.Quota{}, "", now)
	if err != nil {
		t.Fatal(err)
	}
	owner := key.ID
	j := newJob("cj1", owner, 0, map[string]string{"env": "ci"})
	other := newJob("cj2", owner, 1, nil)
	claim := store.IdempotencyRecord{}
	var d webhook.Delivery
	steps := []struct {
		name string
		do   func(context.Context) error
	}{
		{"ProbeWrite", s.ProbeWrite},
		{"AddKey", func(ctx context.Context) error { return s.AddKey(ctx, key) }},
		{"KeyByHash", func(ctx context.Context) error { _, err := s.KeyByHash(ctx, key.Hash); return err }},
		{"ListKeys", func(ctx context.Context) error { _, err := s.ListKeys(ctx); return err }},
		{"AllowSubmission", func(ctx context.Context) error { _, err := s.AllowSubmission(ctx, owner, 60); return err }},
		{"ClaimIdempotencyKey", func(ctx context.Context) (err error) {
			claim, _, err = s.ClaimIdempotencyKey(ctx, owner, "k1", "h1")
			return err
		}},
		{"ReserveActive", func(ctx context.Context) error { _, err := s.ReserveActive(ctx, owner, j.ID, 5); return err }},
		{"CreateJob", func(ctx context.Context) error { return s.CreateJob(ctx, j) }},
		{"CreateJob other", func(ctx context.Context) error { return s.CreateJob(ctx, other) }},
		{"SetWebhookSecret", func(ctx context.Context) error { return s.SetWebhookSecret(ctx, j.ID, "whsec_x") }},
		{"CompleteIdempotencyKey", func(ctx context.Context) error { return s.CompleteIdempotencyKey(ctx, claim, j.ID, true) }},
		{"EnsureTargetHost", func(ctx context.Context) error {
			_, err := s.EnsureTargetHost(ctx, owner, store.TargetHost{Host: "127.0.0.1:80", Token: "t", CreatedAt: now})
			return err
		}},
		{"SaveTargetCheck", func(ctx context.Context) error {
			return s.SaveTargetCheck(ctx, owner, store.TargetHost{Host: "127.0.0.1:80", Token: "t", CreatedAt: now, Verified: true})
		}},
		{"AcquireLease", func(ctx context.Context) error { _, err := s.AcquireLease(ctx, j.ID, "w1", time.Minute); return err }},
		{"UpdateJob start", func(ctx context.Context) error {
			_, err := s.UpdateJob(ctx, j.ID, func(j *job.Job) error { _, err := j.Start("w1", "", testBudget, nowUTC()); return err })
			return err
		}},
		{"RenewLease", func(ctx context.Context) error { _, err := s.RenewLease(ctx, j.ID, "w1", time.Minute); return err }},
		{"UnleasedRunning", func(ctx context.Context) error { _, err := s.UnleasedRunning(ctx, 10); return err }},
		{"AppendEvent", func(ctx context.Context) error {
			return s.AppendEvent(ctx, j.ID, job.EventStarted, map[string]int{"n": 1})
		}},
		{"SetProgress", func(ctx context.Context) error { return s.SetProgress(ctx, j.ID, job.Progress{RunsTotal: 4}) }},
		{"SaveRun", func(ctx context.Context) error {
			_, err := s.SaveRun(ctx, j.ID, &job.Run{RunKey: job.RunKey{Point: 0, Repeat: 0}, Target: "a"})
			return err
		}},
		{"Runs", func(ctx context.Context) error { _, err := s.Runs(ctx, j.ID); return err }},
		{"RunKeys", func(ctx context.Context) error { _, err := s.RunKeys(ctx, j.ID); return err }},
		{"UpdateJob cancel", func(ctx context.Context) error {
			_, err := s.UpdateJob(ctx, j.ID, func(j *job.Job) error { j.CancelRequested = true; return nil })
			return err
		}},
		{"CancelRequested", func(ctx context.Context) error { _, err := s.CancelRequested(ctx, j.ID); return err }},
		{"UpdateJob finish", func(ctx context.Context) error {
			_, err := s.UpdateJob(ctx, j.ID, func(j *job.Job) error { return j.Finish(job.StatusSucceeded, "", nil, nowUTC()) })
			return err
		}},
		{"ReleaseLease", func(ctx context.Context) error { return s.ReleaseLease(ctx, j.ID, "w1") }},
		{"PinJob", func(ctx context.Context) error { _, err := s.PinJob(ctx, j.ID, true); return err }},
		{"UnpinJob", func(ctx context.Context) error { _, err := s.PinJob(ctx, j.ID, false); return err }},
		{"CreateDelivery", func(ctx context.Context) error {
			d = webhook.Delivery{JobID: j.ID, ID: "msg_1", Event: "job.succeeded", URL: "http://127.0.0.1:1/"}
			_, err := s.CreateDelivery(ctx, &d)
			return err
		}},
		{"AppendAttempt", func(ctx context.Context) error {
			return s.AppendAttempt(ctx, j.ID, d.N, &webhook.Attempt{At: nowUTC(), StatusCode: 204})
		}},
		{"UpdateDelivery", func(ctx context.Context) error {
			_, err := s.UpdateDelivery(ctx, j.ID, d.N, func(d *webhook.Delivery) error { d.Status = webhook.StatusDelivered; return nil })
			return err
		}},
		{"Deliveries", func(ctx context.Context) error { _, err := s.Deliveries(ctx, j.ID); return err }},
		{"ReadEvents", func(ctx context.Context) error { _, err := s.ReadEvents(ctx, j.ID, "", 0); return err }},
		{"ListJobs", func(ctx context.Context) error {
			_, _, err := s.ListJobs(ctx, store.ListFilter{Status: job.StatusSucceeded})
			return err
		}},
		{"LatestJob", func(ctx context.Context) error {
			_, err := s.LatestJob(ctx, owner, job.StatusSucceeded, map[string]string{"env": "ci"})
			return err
		}},
		{"BackfillIndexes", func(ctx context.Context) error { _, err := s.BackfillIndexes(ctx); return err }},
		{"ListJobs indexed", func(ctx context.Context) error {
			got, _, err := s.ListJobs(ctx, store.ListFilter{Owner: owner, Status: job.StatusSucceeded, Labels: map[string]string{"env": "ci"}, Name: "cj"})
			if err == nil && (len(got) != 1 || got[0].ID != j.ID) {
				return fmt.Errorf("listed %v, want only %s", ids(got), j.ID)
			}
			return err
		}},
		{"CountByStatus", func(ctx context.Context) error { _, err := s.CountByStatus(ctx); return err }},
		{"DiscardJob", func(ctx context.Context) error { return s.DiscardJob(ctx, other) }},
		{"RevokeKey", func(ctx context.Context) error { _, err := s.RevokeKey(ctx, key.ID, nowUTC()); return err }},
		{"ActiveJobs", func(ctx context.Context) error { _, err := s.ActiveJobs(ctx, owner); return err }},
		{"PutTemplate", func(ctx context.Context) error { _, err := s.PutTemplate(ctx, newTemplate(owner, "t1")); return err }},
		{"PutTemplate replace", func(ctx context.Context) error { _, err := s.PutTemplate(ctx, newTemplate(owner, "t1")); return err }},
		{"PutTemplateWithin at a limit", func(ctx context.Context) error {
			_, err := s.PutTemplateWithin(ctx, newTemplate(owner, "t2"), store.TemplateLimits{Templates: 1, PerRepository: 5})
			if !errors.Is(err, store.ErrLimit) {
				return fmt.Errorf("a 2nd template at a limit of 1: %v, want ErrLimit", err)
			}
			return nil
		}},
		{"TemplatesForRepository", func(ctx context.Context) error {
			got, err := s.TemplatesForRepository(ctx, "github", "acme/shop", 20)
			if err == nil && len(got) != 1 {
				err = fmt.Errorf("%d templates, want 1", len(got))
			}
			return err
		}},
		{"AccountTemplates", func(ctx context.Context) error { _, err := s.AccountTemplates(ctx); return err }},
		{"PinJobWithin", func(ctx context.Context) error { _, err := s.PinJobWithin(ctx, j.ID, true, 1); return err }},
		{"GetTemplate", func(ctx context.Context) error { _, err := s.GetTemplate(ctx, owner, "t1"); return err }},
		{"ListTemplates", func(ctx context.Context) error { _, err := s.ListTemplates(ctx, owner); return err }},
		{"ListAllTemplates", func(ctx context.Context) error { _, err := s.ListAllTemplates(ctx); return err }},
		{"StartSchedule", func(ctx context.Context) error { _, err := s.StartSchedule(ctx, owner, "t1", time.Now()); return err }},
		{"ClaimTick", func(ctx context.Context) error {
			_, err := s.ClaimTick(ctx, owner, "t1", time.Now().Add(time.Minute))
			return err
		}},
		{"RecordScheduledRun", func(ctx context.Context) error {
			return s.RecordScheduledRun(ctx, owner, "t1", store.ScheduledRun{Tick: time.Now(), JobID: "j1"})
		}},
		{"GetScheduleState", func(ctx context.Context) error { _, err := s.GetScheduleState(ctx, owner, "t1"); return err }},
		{"DeleteTemplate", func(ctx context.Context) error { return s.DeleteTemplate(ctx, owner, "t1") }},
	}
	for _, st := range steps {
		if err := st.do(ctx); err != nil {
			t.Fatalf("%s on a cluster: %v", st.name, err)
		}
	}
	// What the steps wrote reads back as on one server.
	got, _, err := s.ListJobs(ctx, store.ListFilter{Owner: owner})
	if err != nil || len(got) != 1 || got[0].ID != j.ID || got[0].Status != job.StatusSucceeded {
		t.Errorf("ListJobs after the steps = %v, %v; want only %s, succeeded (%s discarded)", ids(got), err, j.ID, other.ID)
	}
	if n, err := s.ActiveJobs(ctx, owner); err != nil || n != 0 {
		t.Errorf("active jobs after the job ended = %d, %v; want 0", n, err)
	}
	if n, err := s.ActiveKeyCount(ctx); err != nil || n != 0 {
		t.Errorf("active keys after RevokeKey = %d, %v; want 0", n, err)
	}
}
