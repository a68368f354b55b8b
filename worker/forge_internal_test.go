package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/forge"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/secrettest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
	"github.com/benchq/benchq/internal/testservers/githubapi"
	"github.com/benchq/benchq/internal/webhook"
)

const forgeSHA = "9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"

// forgeDeliveries is a deliveryStore holding one job's deliveries and
// one template.
type forgeDeliveries struct {
	logs     []store.DeliveryLog
	template *template.Template
	locked   map[string]string // comment target -> holder
}

func (f *forgeDeliveries) LockForgeComment(_ context.Context, target, holder string, _ time.Duration) (bool, error) {
	if f.locked == nil {
		f.locked = map[string]string{}
	}
	if h, ok := f.locked[target]; ok && h != holder {
		return false, nil
	}
	f.locked[target] = holder
	return true, nil
}

func (f *forgeDeliveries) UnlockForgeComment(_ context.Context, target, holder string) error {
	if f.locked[target] == holder {
		delete(f.locked, target)
	}
	return nil
}

func (f *forgeDeliveries) Delivery(_ context.Context, _ string, n int) (*webhook.Delivery, error) {
	d := f.logs[n-1].Delivery
	return &d, nil
}

func (f *forgeDeliveries) WebhookSecret(context.Context, string) (string, error) {
	return "", store.ErrNotFound
}

func (f *forgeDeliveries) AppendAttempt(_ context.Context, _ string, n int, a *webhook.Attempt) error {
	f.logs[n-1].Attempts = append(f.logs[n-1].Attempts, *a)
	a.N = len(f.logs[n-1].Attempts)
	return nil
}

func (f *forgeDeliveries) UpdateDelivery(_ context.Context, _ string, n int, fn func(*webhook.Delivery) error) (*webhook.Delivery, error) {
	if err := fn(&f.logs[n-1].Delivery); err != nil {
		return nil, err
	}
	d := f.logs[n-1].Delivery
	return &d, nil
}

func (f *forgeDeliveries) Deliveries(context.Context, string) ([]store.DeliveryLog, error) {
	return f.logs, nil
}

func (f *forgeDeliveries) GetTemplate(_ context.Context, owner, name string) (*template.Template, error) {
	if f.template == nil || f.template.Owner != owner || f.template.Name != name {
		return nil, store.ErrNotFound
	}
	return f.template, nil
}

// add appends a delivery of state's status (or the comment, for "").
func (f *forgeDeliveries) add(t *testing.T, state forge.State, status webhook.Status, created time.Time) {
	t.Helper()
	m := forge.Message{Forge: job.ForgeGitHub, Repository: "acme/shop", SHA: forgeSHA, Template: "shop"}
	name := job.ForgeStatusDelivery(job.ForgeGitHub, string(state))
	m.Status = &forge.Status{State: state, Context: "benchq/shop"}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	f.logs = append(f.logs, store.DeliveryLog{Delivery: webhook.Delivery{JobID: "j1", N: len(f.logs) + 1, ID: webhook.MessageID("j1", name),
		Event: name, Status: status, MaxRetry: 3, CreatedAt: created, Payload: body}})
}

func forgeDeliverer(t *testing.T, st *forgeDeliveries, gh *githubapi.Server, serviceToken string) *Deliverer {
	t.Helper()
	fc, err := forge.New(forge.Config{GitHubURL: gh.URL})
	if err != nil {
		t.Fatal(err)
	}
	return newDeliverer(st, WebhookConfig{Logger: slog.New(slog.NewTextHandler(t.Output(), nil)), Forge: fc,
		ForgeTokens: map[string]string{job.ForgeGitHub: serviceToken}}.withDefaults())
}

func deliverN(t *testing.T, d *Deliverer, n int) error {
	t.Helper()
	task, err := queue.NewWebhookDeliverTask("j1", "owner-1", n, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	return d.HandleWebhookDeliver(t.Context(), task)
}

// TestForgeStatusOrder: the forge shows the last status set, so a final
// status waits for a pending one in flight (a wait that costs no retry)
// and a pending one never follows a final one already tried.
func TestForgeStatusOrder(t *testing.T) {
	token := secrettest.Random(t, "ghp_")
	now := time.Now()
	tests := []struct {
		name     string
		setup    func(t *testing.T, st *forgeDeliveries)
		n        int
		held     bool
		want     webhook.Status
		statuses []string
	}{
		{"final waits for pending in flight", func(t *testing.T, st *forgeDeliveries) {
			st.add(t, forge.StatePending, webhook.StatusRetrying, now)
			st.add(t, forge.StateSuccess, webhook.StatusPending, now)
		}, 2, true, webhook.StatusPending, nil},
		{"final goes once pending settled", func(t *testing.T, st *forgeDeliveries) {
			st.add(t, forge.StatePending, webhook.StatusDelivered, now)
			st.add(t, forge.StateSuccess, webhook.StatusPending, now)
		}, 2, false, webhook.StatusDelivered, []string{"success"}},
		{"final goes after the hold ran out", func(t *testing.T, st *forgeDeliveries) {
			st.add(t, forge.StatePending, webhook.StatusRetrying, now)
			st.add(t, forge.StateFailure, webhook.StatusPending, now.Add(-maxForgeHold-time.Second))
		}, 2, false, webhook.StatusDelivered, []string{"failure"}},
		{"pending goes while final is held", func(t *testing.T, st *forgeDeliveries) {
			st.add(t, forge.StatePending, webhook.StatusRetrying, now)
			st.add(t, forge.StateSuccess, webhook.StatusPending, now)
		}, 1, false, webhook.StatusDelivered, []string{"pending"}},
		{"pending superseded by a final tried", func(t *testing.T, st *forgeDeliveries) {
			st.add(t, forge.StatePending, webhook.StatusRetrying, now)
			st.add(t, forge.StateSuccess, webhook.StatusDelivered, now)
		}, 1, false, webhook.StatusSuperseded, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := githubapi.Start(t, token, "")
			st := &forgeDeliveries{}
			tt.setup(t, st)
			d := forgeDeliverer(t, st, gh, token)
			err := deliverN(t, d, tt.n)
			if held := errors.Is(err, errHeld); held != tt.held || !tt.held && err != nil {
				t.Fatalf("HandleWebhookDeliver = %v, want held %v", err, tt.held)
			}
			if tt.held && (webhookIsFailure(err) || d.retryDelay(0, err, nil) != forgeHoldWait) {
				t.Errorf("a held delivery counts as a failure, or waits %v", d.retryDelay(0, err, nil))
			}
			if got := st.logs[tt.n-1].Status; got != tt.want {
				t.Errorf("delivery %d is %s, want %s", tt.n, got, tt.want)
			}
			var states []string
			for _, s := range gh.Statuses("acme/shop", forgeSHA) {
				states = append(states, s.State)
			}
			if strings.Join(states, ",") != strings.Join(tt.statuses, ",") {
				t.Errorf("the forge got %v, want %v", states, tt.statuses)
			}
			for _, p := range gh.Problems() {
				t.Errorf("the loopback GitHub refused: %s", p)
			}
		})
	}
}

// TestForgeTokenChoice: the template's own token is sent when it keeps
// one, else the service's; with neither nothing is sent and the delivery
// fails for good, saying what to set.
func TestForgeTokenChoice(t *testing.T) {
	templateToken, serviceToken := secrettest.Random(t, "ghp_"), secrettest.Random(t, "ghp_")
	shop := &template.Template{Name: "shop", Owner: "owner-1", Triggers: template.Triggers{GitHub: &template.GitHubTrigger{APIToken: templateToken}}}
	tests := []struct {
		name     string
		template *template.Template
		accepts  string // the token the forge accepts
		service  string
		want     webhook.Status
		skip     bool
	}{
		{"template's token", shop, templateToken, serviceToken, webhook.StatusDelivered, false},
		{"template gone: the service's", nil, serviceToken, serviceToken, webhook.StatusDelivered, false},
		{"template without one: the service's", &template.Template{Name: "shop", Owner: "owner-1"}, serviceToken, serviceToken, webhook.StatusDelivered, false},
		{"another owner's template is not read", &template.Template{Name: "shop", Owner: "owner-2", Triggers: shop.Triggers}, serviceToken, serviceToken, webhook.StatusDelivered, false},
		{"no token at all", nil, serviceToken, "", webhook.StatusFailed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh := githubapi.Start(t, tt.accepts, "")
			st := &forgeDeliveries{template: tt.template}
			st.add(t, forge.StatePending, webhook.StatusPending, time.Now())
			err := deliverN(t, forgeDeliverer(t, st, gh, tt.service), 1)
			if skip := errors.Is(err, asynq.SkipRetry); skip != tt.skip || !tt.skip && err != nil {
				t.Fatalf("HandleWebhookDeliver = %v, want skip-retry %v", err, tt.skip)
			}
			if got := st.logs[0].Status; got != tt.want || len(st.logs[0].Attempts) != 1 {
				t.Fatalf("delivery %s after %d attempts, want %s after one", got, len(st.logs[0].Attempts), tt.want)
			}
			if tt.skip && (len(gh.Requests()) != 0 || !strings.Contains(st.logs[0].Attempts[0].Error, "BENCHQ_GITHUB_TOKEN")) {
				t.Errorf("without a token: %d requests, attempt %+v; want none, naming BENCHQ_GITHUB_TOKEN", len(gh.Requests()), st.logs[0].Attempts[0])
			}
		})
	}
}

// TestForgeCommentLocked: a comment delivery whose request's comment
// another job's delivery is writing waits its turn, costing no retry, and
// writes once the lock is free; its own lock is given back.
func TestForgeCommentLocked(t *testing.T) {
	token := secrettest.Random(t, "ghp_")
	gh := githubapi.Start(t, token, "")
	st := &forgeDeliveries{}
	c := forge.Comment{Mode: job.CommentAlways, Marker: forge.Marker("benchq/shop"), JobID: "01J000000000000000000000A1", Body: forge.Marker("benchq/shop") + "\nresult\n"}
	m := forge.Message{Forge: job.ForgeGitHub, Repository: "acme/shop", SHA: forgeSHA, Request: 12, Comment: &c}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	name := job.ForgeCommentDelivery(job.ForgeGitHub)
	st.logs = append(st.logs, store.DeliveryLog{Delivery: webhook.Delivery{JobID: "j1", N: 1, ID: webhook.MessageID("j1", name),
		Event: name, Status: webhook.StatusPending, MaxRetry: 3, CreatedAt: time.Now(), Payload: body}})
	target := "github acme/shop#12 " + c.Marker
	st.locked = map[string]string{target: "msg_j0_github.comment"}
	d := forgeDeliverer(t, st, gh, token)
	if err := deliverN(t, d, 1); !errors.Is(err, errHeld) || webhookIsFailure(err) || len(gh.Requests()) != 0 {
		t.Fatalf("HandleWebhookDeliver with the comment locked = %v after %d requests, want held before any", err, len(gh.Requests()))
	}
	delete(st.locked, target)
	if err := deliverN(t, d, 1); err != nil || len(gh.Comments("acme/shop", 12)) != 1 || len(st.locked) != 0 {
		t.Fatalf("HandleWebhookDeliver once free = %v, %d comments, locks %v; want one comment and the lock given back", err, len(gh.Comments("acme/shop", 12)), st.locked)
	}
}
