package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// stubTargets answers every check with err and records what it saw.
type stubTargets struct {
	err     error
	owner   string
	targets []job.TargetURL
}

func (s *stubTargets) VerifySpec(_ context.Context, owner string, targets []job.TargetURL) (netguard.Pins, error) {
	s.owner, s.targets = owner, targets
	return nil, s.err
}

func TestTargetCheckBeforeAnyLoad(t *testing.T) {
	unverified := fmt.Errorf("%w: %w", targetverify.ErrUnverified,
		job.Invalid([]job.FieldError{{Field: "targets[0].url", Message: "host is not verified for this API key"}}))
	tests := []struct {
		name       string
		err        error
		wantStatus job.Status
		wantRetry  bool // a handler error asynq retries
		wantLoad   bool
	}{
		{"verified", nil, job.StatusSucceeded, false, true},
		{"token withdrawn", unverified, job.StatusFailed, false, false},
		// Queued again, not left running: no worker runs it until the retry.
		{"store down", errors.New("redis: connection refused"), job.StatusQueued, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tg := testservers.StartTarget(t, "hello benchq", 0)
			j, task := e.create(t, closedSpec([]int{1}, []int{20}, 1, tg))
			check := &stubTargets{err: tt.err}
			r := worker.NewRunner(e.st, worker.Config{Logger: e.log, Targets: check})
			err := r.HandleJobRun(t.Context(), task)
			if retry := err != nil && !errors.Is(err, asynq.SkipRetry); retry != tt.wantRetry {
				t.Errorf("HandleJobRun = %v; retried %v, want %v", err, retry, tt.wantRetry)
			}
			got, _ := e.st.GetJob(t.Context(), j.ID)
			if got.Status != tt.wantStatus {
				t.Errorf("job status = %s (%q), want %s", got.Status, got.Error, tt.wantStatus)
			}
			if tt.err != nil && tt.wantStatus == job.StatusFailed && !strings.Contains(got.Error, "not verified") {
				t.Errorf("job error = %q, want the verification failure", got.Error)
			}
			if hits := tg.Hits(); (hits > 0) != tt.wantLoad {
				t.Errorf("target got %d requests, want load %v", hits, tt.wantLoad)
			}
			if len(check.targets) != 1 || check.targets[0].URL != tg.URL || check.owner != j.Owner {
				t.Errorf("checked %q %+v, want the job's owner and its one target URL", check.owner, check.targets)
			}
		})
	}
}

var _ worker.TargetChecker = (*targetverify.Verifier)(nil)

// flippingResolver answers the first lookup of a name with first and
// every later one with later: a DNS owner pointing a verified name at
// someone else's server once the token has been fetched.
type flippingResolver struct {
	first, later netip.Addr
	lookups      atomic.Int64
}

func (r *flippingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.lookups.Add(1) == 1 {
		return []netip.Addr{r.first}, nil
	}
	return []netip.Addr{r.later}, nil
}

// recordingDialer records every address it is asked to dial and connects
// only to allowed, so a test never sends a packet elsewhere.
type recordingDialer struct {
	allowed string
	mu      sync.Mutex
	calls   []string
}

func (d *recordingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.calls = append(d.calls, address)
	d.mu.Unlock()
	if address != d.allowed {
		return nil, errors.New("test dialer: not dialing " + address)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, address)
}

func (d *recordingDialer) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// ownedTarget serves token at its verification path and counts the other
// requests (the load).
func ownedTarget(t *testing.T, token string) (*httptest.Server, *atomic.Int64) {
	var load atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == targetverify.Path(token) {
			fmt.Fprintln(w, token)
			return
		}
		load.Add(1)
		fmt.Fprint(w, "hello benchq")
	}))
	t.Cleanup(srv.Close)
	return srv, &load
}

// TestVerifiedTargetsArePinned: the name resolves to A when the worker
// verifies it and to B afterwards; the load goes to A, and no connection
// to B is ever attempted.
func TestVerifiedTargetsArePinned(t *testing.T) {
	e := newEnv(t)
	const token = "0123456789abcdef0123456789abcdef"
	srv, load := ownedTarget(t, token)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	a := net.JoinHostPort("127.0.0.1", port)
	res := &flippingResolver{first: netip.MustParseAddr("127.0.0.1"), later: netip.MustParseAddr("127.0.0.2")}
	rec := &recordingDialer{allowed: a}
	guarded := &netguard.Dialer{Policy: netguard.LoopbackOnly(), Resolver: res, Dialer: rec}
	verifier := targetverify.New(e.st, targetverify.Config{Dial: guarded.DialContext})

	spec := job.Spec{Targets: []job.Target{{URL: "http://app.test:" + port + "/bench"}},
		Sweep: job.Sweep{Concurrency: []int{2}, Requests: []int{20}, Repeats: 2, WarmupRequests: 5}}
	j, task := e.create(t, spec)
	if _, err := e.st.EnsureTargetHost(t.Context(), j.Owner, store.TargetHost{Host: "app.test:" + port, Token: token}); err != nil {
		t.Fatal(err)
	}
	// B is a real listener at the same port, so a connection the pins
	// failed to stop would be seen, not just attempted.
	b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", port))
	if err != nil {
		t.Fatal(err)
	}
	var reachedB atomic.Int64
	go func() {
		for {
			c, err := b.Accept()
			if err != nil {
				return
			}
			reachedB.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { b.Close() })
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log, Targets: verifier, Policy: netguard.LoopbackOnly(), Resolver: res})
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("HandleJobRun = %v", err)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	if got.Status != job.StatusSucceeded {
		t.Errorf("job status = %s (%q), want succeeded", got.Status, got.Error)
	}
	if n := load.Load(); n < 40 {
		t.Errorf("target got %d load requests, want the 2 runs of 20 (and the warm-up)", n)
	}
	for _, addr := range rec.dialed() {
		if addr != a {
			t.Errorf("verification dialed %s; want only %s", addr, a)
		}
	}
	if n := reachedB.Load(); n != 0 {
		t.Errorf("B got %d load connections, want none", n)
	}
	if n := res.lookups.Load(); n != 1 {
		t.Errorf("the name was looked up %d times, want once, by the verification", n)
	}
}

// TestVerifyRefusesHostHeaderBeforeLoad: a job whose requests name
// another host in a Host header (submitted before the API refused them)
// fails in the worker without a fetch or a request.
func TestVerifyRefusesHostHeaderBeforeLoad(t *testing.T) {
	e := newEnv(t)
	srv, load := ownedTarget(t, "unused")
	spec := job.Spec{Targets: []job.Target{{URL: srv.URL + "/bench"}},
		Request: job.Request{Headers: map[string]string{"Host": "victim.example"}},
		Sweep:   job.Sweep{Concurrency: []int{1}, Requests: []int{5}}}
	j, task := e.create(t, spec)
	verifier := targetverify.New(e.st, targetverify.Config{})
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log, Targets: verifier})
	if err := r.HandleJobRun(t.Context(), task); err != nil && !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("HandleJobRun = %v, want the job failed, not retried", err)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, "Host header") {
		t.Errorf("job = %s (%q), want failed on the Host header", got.Status, got.Error)
	}
	if n := load.Load(); n != 0 {
		t.Errorf("target got %d requests, want none", n)
	}
	if hosts, _ := e.st.TargetHosts(t.Context(), j.Owner); len(hosts) != 0 {
		t.Errorf("hosts checked: %+v, want none", hosts)
	}
}
