package admit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
	"github.com/benchq/benchq/internal/testservers"
)

// loopbackOnly is an address policy that admits loopback targets only.
func loopbackOnly(context.Context) job.URLChecker { return testservers.LoopbackOnly }

type env struct {
	st    *store.Store
	queue *jobtest.Queue
	adm   *Admitter
}

// newEnv is an Admitter over the real store on miniredis, with every
// dependency but the ones tune takes away.
func newEnv(t *testing.T, cfg Config, tune func(*Deps)) *env {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	e := &env{st: store.New(rdb, store.Options{}), queue: &jobtest.Queue{}}
	if cfg.URLPolicy == nil {
		cfg.URLPolicy = loopbackOnly
	}
	deps := Deps{Store: e.st, Queue: e.queue, Quotas: e.st, Secrets: e.st, Selector: e.st, Keys: e.st}
	if tune != nil {
		tune(&deps)
	}
	e.adm = New(cfg, deps)
	return e
}

// addKey stores a new key with quota q and webhook secret secret.
func (e *env) addKey(t *testing.T, q apikey.Quota, secret string) Caller {
	t.Helper()
	k, _, err := apikey.New("test", false, q, secret, time.Now().UTC())
	if err == nil {
		err = e.st.AddKey(t.Context(), k)
	}
	if err != nil {
		t.Fatal(err)
	}
	return CallerOf(k)
}

func spec(t *testing.T, body string) job.Spec {
	t.Helper()
	s, err := job.Decode(strings.NewReader(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return s
}

const okSpec = `{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurrency":[2,4],"requests":[10]}}`

var apiSource = Source{Via: ViaAPI, RequestID: "req-1"}

// TestCreate: an accepted job is stored queued for its caller, with its
// spec's defaults, and enqueued; a webhook gets a generated secret,
// shown once, unless the key has its own.
func TestCreate(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	who := e.addKey(t, apikey.Quota{}, "")
	j, secret, err := e.adm.Create(t.Context(), who, spec(t, okSpec), apiSource)
	if err != nil {
		t.Fatalf("Create = %v", err)
	}
	if secret != "" {
		t.Errorf("secret = %q for a job without a webhook, want none", secret)
	}
	stored, err := e.st.GetJob(t.Context(), j.ID)
	if err != nil {
		t.Fatalf("GetJob(%s) = %v", j.ID, err)
	}
	if stored.Owner != who.KeyID || stored.Status != job.StatusQueued || stored.Progress.RunsTotal != len(stored.Spec.Schedule()) {
		t.Errorf("stored job = owner %q, status %s, runs total %d; want %s, queued, %d",
			stored.Owner, stored.Status, stored.Progress.RunsTotal, who.KeyID, len(stored.Spec.Schedule()))
	}
	if want := spec(t, okSpec).WithDefaults(); stored.Spec.Sweep.Repeats != want.Sweep.Repeats || stored.Spec.Sweep.Repeats == 0 {
		t.Errorf("stored repeats = %d, want the default %d", stored.Spec.Sweep.Repeats, want.Sweep.Repeats)
	}
	if ids := e.queue.JobIDs(t); len(ids) != 1 || ids[0] != j.ID {
		t.Errorf("enqueued jobs = %v, want [%s]", ids, j.ID)
	}

	hooked := `{"targets":[{"url":"http://127.0.0.1:9/"}],"webhook":{"url":"http://127.0.0.1:10/hook"}}`
	j, secret, err = e.adm.Create(t.Context(), who, spec(t, hooked), apiSource)
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("Create with a webhook = %q, %v; want a generated whsec_ secret", secret, err)
	}
	if kept, err := e.st.WebhookSecret(t.Context(), j.ID); err != nil || kept != secret {
		t.Errorf("kept secret = %q, %v; want the one shown", kept, err)
	}
	own := e.addKey(t, apikey.Quota{}, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	j, secret, err = e.adm.Create(t.Context(), own, spec(t, hooked), apiSource)
	if err != nil || secret != "" {
		t.Fatalf("Create for a key with its own secret = %q, %v; want no secret shown", secret, err)
	}
	if kept, err := e.st.WebhookSecret(t.Context(), j.ID); err != nil || kept != own.WebhookSecret {
		t.Errorf("kept secret = %q, %v; want the key's", kept, err)
	}
}

// TestCreateRefusals: every refusal is a coded error, naming its field
// or quota, and creates nothing.
func TestCreateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		deps  func(*Deps)
		quota apikey.Quota
		spec  string
		times int // Create is called this many times; the last must fail
		code  errcode.Code
		field string
		limit int
	}{
		{name: "invalid spec", spec: `{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurrency":[0]}}`,
			code: errcode.InvalidSpec, field: "sweep.concurrency[0]"},
		{name: "address policy", spec: `{"targets":[{"url":"http://192.0.2.1/"}]}`,
			code: errcode.InvalidSpec, field: "targets[0].url"},
		{name: "over a per-run quota", quota: apikey.Quota{MaxConcurrency: 3}, spec: okSpec,
			code: errcode.InvalidSpec, field: "sweep.concurrency[1]"},
		{name: "submission rate", quota: apikey.Quota{SubmissionsPerMinute: 1}, spec: okSpec, times: 2,
			code: errcode.RateLimited, limit: 1},
		{name: "active jobs", quota: apikey.Quota{MaxActiveJobs: 1}, spec: okSpec, times: 2,
			code: errcode.TooManyActiveJobs, limit: 1},
		{name: "compare_to names no job", spec: `{"targets":[{"url":"http://127.0.0.1:9/"}],"compare_to":"01JC3W9Q5V1ZK2M4N6P8R0T2V4","thresholds":["rps > 1"]}`,
			code: errcode.InvalidSpec, field: "compare_to"},
		{name: "compare_to selector without a selector", deps: func(d *Deps) { d.Selector = nil },
			spec: `{"targets":[{"url":"http://127.0.0.1:9/"}],"compare_to":{"labels":{"branch":"main"}},"thresholds":["rps > 1"]}`,
			code: errcode.Unavailable},
		{name: "webhook without a secret store", deps: func(d *Deps) { d.Secrets = nil },
			spec: `{"targets":[{"url":"http://127.0.0.1:9/"}],"webhook":{"url":"http://127.0.0.1:10/hook"}}`,
			code: errcode.Unavailable},
		{name: "verification without a verifier", cfg: Config{VerifyTargets: true}, spec: okSpec,
			code: errcode.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.cfg, tc.deps)
			who := e.addKey(t, tc.quota, "")
			var err error
			for range max(tc.times, 1) {
				_, _, err = e.adm.Create(t.Context(), who, spec(t, tc.spec), apiSource)
			}
			ce, ok := errcode.Of(err)
			if !ok || ce.Code != tc.code {
				t.Fatalf("Create = %v, want code %s", err, tc.code)
			}
			if tc.field != "" && !namesField(ce, tc.field) {
				t.Errorf("problems = %+v, want one naming %s", ce.Problems, tc.field)
			}
			if ce.Limit != tc.limit {
				t.Errorf("limit = %d, want %d", ce.Limit, tc.limit)
			}
			if n := len(e.queue.JobIDs(t)); n != max(tc.times, 1)-1 {
				t.Errorf("%d jobs enqueued, want %d", n, max(tc.times, 1)-1)
			}
		})
	}
}

func namesField(ce *errcode.Error, field string) bool {
	for _, p := range ce.Problems {
		if p.Field == field {
			return true
		}
	}
	return false
}

// TestCreateFailingHalfWayLeavesNothing: a job the queue refused is
// discarded with its secret, and its active-job slot is free again.
func TestCreateFailingHalfWayLeavesNothing(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	who := e.addKey(t, apikey.Quota{MaxActiveJobs: 1}, "")
	e.queue.SetErr(&store.UnavailableError{Condition: store.Unreachable, Err: errors.New("connection refused")})
	hooked := `{"targets":[{"url":"http://127.0.0.1:9/"}],"webhook":{"url":"http://127.0.0.1:10/hook"}}`
	_, _, err := e.adm.Create(t.Context(), who, spec(t, hooked), apiSource)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Create with the queue down = %v, want store.ErrUnavailable", err)
	}
	jobs, _, err := e.st.ListJobs(t.Context(), store.ListFilter{Owner: who.KeyID, Limit: 10})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("jobs left = %d, %v; want none", len(jobs), err)
	}
	e.queue.SetErr(nil)
	if _, _, err := e.adm.Create(t.Context(), who, spec(t, okSpec), apiSource); err != nil {
		t.Fatalf("Create once the queue is back = %v, want the one slot free", err)
	}
}

// TestRunTemplate: a template's job belongs to its owner and carries the
// template's labels, then the run's, then template=<name>; a revoked
// owner runs nothing, and a schedule's tick is labelled trigger=schedule.
func TestRunTemplate(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	owner := e.addKey(t, apikey.Quota{}, "")
	tpl := &template.Template{Name: "checkout", Owner: owner.KeyID,
		Spec:   spec(t, `{"labels":{"team":"shop","branch":"{{branch}}"},"targets":[{"url":"http://127.0.0.1:9/"}]}`),
		Values: map[string]string{"branch": "main"}}
	j, _, err := e.adm.RunTemplate(t.Context(), tpl, TemplateRun{
		Values: map[string]string{"branch": "feature"}, Labels: map[string]string{"team": "ci", "commit": "abc"},
		Source: Source{Via: ViaHook, Provider: "github", Delivery: "d1"}})
	if err != nil {
		t.Fatalf("RunTemplate = %v", err)
	}
	want := map[string]string{"team": "ci", "branch": "feature", "commit": "abc", job.LabelTemplate: "checkout"}
	if j.Owner != owner.KeyID || j.Spec.Name != "checkout" || !equal(j.Spec.Labels, want) {
		t.Errorf("job = owner %q, name %q, labels %v; want %s, checkout, %v", j.Owner, j.Spec.Name, j.Spec.Labels, owner.KeyID, want)
	}

	tick := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	j, err = e.adm.RunScheduled(t.Context(), tpl, tick)
	if err != nil {
		t.Fatalf("RunScheduled = %v", err)
	}
	want = map[string]string{"team": "shop", "branch": "main", "trigger": "schedule", job.LabelTemplate: "checkout"}
	if !equal(j.Spec.Labels, want) {
		t.Errorf("scheduled job labels = %v, want %v", j.Spec.Labels, want)
	}

	if _, err := e.st.RevokeKey(t.Context(), owner.KeyID, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.adm.RunTemplate(t.Context(), tpl, TemplateRun{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunTemplate of a revoked owner = %v, want store.ErrNotFound", err)
	}
	anon := *tpl
	anon.Owner = AnonymousOwner
	if j, _, err := e.adm.RunTemplate(t.Context(), &anon, TemplateRun{}); err != nil || j.Owner != AnonymousOwner {
		t.Errorf("RunTemplate of the open mode's template = %v, %v; want a job of %q", j, err, AnonymousOwner)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSourceString(t *testing.T) {
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{Source{Via: ViaAPI, RequestID: "r1"}, "request r1"},
		{Source{Via: ViaIdempotentAPI, RequestID: "r1"}, "idempotent request r1"},
		{Source{Via: ViaDashboard, RequestID: "r1"}, "dashboard request r1"},
		{Source{Via: ViaTemplateRun, RequestID: "r1"}, "template run request r1"},
		{Source{Via: ViaHook, RequestID: "r1", Provider: "github", Delivery: "d1"}, "github delivery d1 (request r1)"},
		{Source{Via: ViaSchedule, Tick: time.Date(2026, 1, 2, 3, 4, 0, 0, time.FixedZone("x", 3600))}, "schedule tick 2026-01-02T02:04:00Z"},
	} {
		if got := tc.src.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestCallerJob: a caller loads its own job, an admin any job; another
// key's job is not found, exactly as a missing one.
func TestCallerJob(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	owner := e.addKey(t, apikey.Quota{}, "")
	other := e.addKey(t, apikey.Quota{}, "")
	j, _, err := e.adm.Create(t.Context(), owner, spec(t, okSpec), apiSource)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		who   Caller
		id    string
		found bool
	}{
		{"owner", owner, j.ID, true},
		{"admin", Caller{KeyID: "key_admin", Admin: true}, j.ID, true},
		{"another key", other, j.ID, false},
		{"no caller", Caller{}, j.ID, false},
		{"missing job", owner, "01JC3W9Q5V1ZK2M4N6P8R0T2V4", false},
	} {
		got, err := tc.who.Job(t.Context(), e.st, tc.id)
		switch {
		case tc.found && (err != nil || got.ID != j.ID):
			t.Errorf("%s: Job = %v, %v; want job %s", tc.name, got, err, j.ID)
		case !tc.found && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s: Job = %v, %v; want store.ErrNotFound", tc.name, got, err)
		}
	}
}
