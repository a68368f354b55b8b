package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/benchq/benchq/internal/netguard"
)

// loopbackClient dials through the loopback-only policy, as the worker's
// default does.
func loopbackClient(timeout time.Duration) *http.Client {
	p := netguard.LoopbackOnly()
	return NewClient((&netguard.Dialer{Policy: p, Dialer: &net.Dialer{Control: p.Control}}).DialContext, timeout)
}

func TestSendOutcomes(t *testing.T) {
	secret := NewSecret()
	sig, _ := NewSigner(secret)
	verifier, _ := standardwebhooks.NewWebhook(secret)
	var redirected atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(body, r.Header); err != nil {
			http.Error(w, "bad signature: "+err.Error(), http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/big500", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, strings.Repeat("x", 5000))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { redirected.Add(1) })
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	s := &Sender{Client: loopbackClient(0)}
	tests := []struct {
		path      string
		code      int
		outcome   Outcome
		bodyLen   int
		retryWait int64
	}{
		{"/ok", 204, OutcomeDelivered, 0, 0},
		{"/big500", 500, OutcomeRetry, MaxLoggedBody, 0},
		{"/moved", 302, OutcomeRetry, -1, 0},
		{"/gone", 410, OutcomeGone, 0, 0},
		{"/busy", 429, OutcomeRetry, 0, 7000},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			a := s.Send(context.Background(), srv.URL+tt.path, "msg_test", sig, []byte(`{"type":"job.succeeded"}`))
			if a.StatusCode != tt.code || a.Outcome != tt.outcome || a.Error != "" || a.RetryAfterMs != tt.retryWait {
				t.Errorf("Send(%s) = %+v, want status %d outcome %s retry_after %dms", tt.path, a, tt.code, tt.outcome, tt.retryWait)
			}
			if tt.bodyLen >= 0 && len(a.Response) != tt.bodyLen {
				t.Errorf("Send(%s) kept %d bytes of the answer, want %d", tt.path, len(a.Response), tt.bodyLen)
			}
			if a.DurationMs <= 0 || a.At.IsZero() {
				t.Errorf("Send(%s) duration %v at %v, want both set", tt.path, a.DurationMs, a.At)
			}
		})
	}
	if n := redirected.Load(); n != 0 {
		t.Errorf("the redirect target was requested %d times, want 0: redirects are not followed", n)
	}
}

// TestSendTimesOut holds the real 10 s default: a receiver that never
// answers is cut between 10 and 12 s, and the attempt says timeout.
func TestSendTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 10 s")
	}
	t.Parallel()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // so the server notices the client hanging up
		select {                  // never answers
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first
	sig, _ := NewSigner(NewSecret())
	s := &Sender{Client: loopbackClient(0)}
	start := time.Now()
	a := s.Send(context.Background(), srv.URL, "msg_t", sig, []byte(`{}`))
	elapsed := time.Since(start)
	if a.Outcome != OutcomeRetry || a.StatusCode != 0 || !strings.HasPrefix(a.Error, "timeout") {
		t.Errorf("Send to a silent receiver = %+v, want a retry with a timeout error", a)
	}
	if elapsed < 10*time.Second || elapsed > 12*time.Second || a.DurationMs < 10000 || a.DurationMs > 12000 {
		t.Errorf("cut after %v (logged %.0f ms), want 10..12 s", elapsed, a.DurationMs)
	}
}

// stubResolver answers every name with fixed addresses.
type stubResolver []netip.Addr

func (r stubResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

// countingDialer records dials and never connects anywhere.
type countingDialer struct {
	mu    sync.Mutex
	calls []string
}

func (d *countingDialer) DialContext(_ context.Context, _, address string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, address)
	return nil, errors.New("test dialer: no network here")
}

// TestSendRefusedAtDialTime: a receiver name that resolves to a private
// or metadata address passed submission (it is a name) but is refused
// when dialed, and nothing is dialed.
func TestSendRefusedAtDialTime(t *testing.T) {
	policy, err := netguard.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := NewSigner(NewSecret())
	for _, addr := range []string{"10.0.0.1", "169.254.169.254", "127.0.0.1", "::ffff:192.168.1.1"} {
		t.Run(addr, func(t *testing.T) {
			dialer := &countingDialer{}
			d := &netguard.Dialer{Policy: policy, Resolver: stubResolver{netip.MustParseAddr(addr)}, Dialer: dialer}
			s := &Sender{Client: NewClient(d.DialContext, time.Second)}
			a := s.Send(context.Background(), "http://hooks.example.test/benchq", "msg_x", sig, []byte(`{}`))
			if a.Outcome != OutcomeRetry || a.StatusCode != 0 || !strings.Contains(a.Error, "refused") {
				t.Errorf("Send to a name resolving to %s = %+v, want refused", addr, a)
			}
			if len(dialer.calls) != 0 {
				t.Errorf("dialed %v, want nothing dialed", dialer.calls)
			}
			// The attempt log is the receiver owner's to read: the
			// policy's sentence, not a Go package's name.
			if strings.Contains(a.Error, "netguard") || strings.Count(a.Error, "refused by the address policy") != 1 {
				t.Errorf("attempt error = %q, want the policy's refusal once and no Go package name", a.Error)
			}
		})
	}
}

// TestControlRefusesAtTheSocket: the last check, on the address the
// kernel is about to connect to.
func TestControlRefusesAtTheSocket(t *testing.T) {
	p := netguard.LoopbackOnly()
	if err := p.Control("tcp4", "10.0.0.1:80", nil); !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("Control(10.0.0.1:80) = %v, want ErrRefused", err)
	}
	if err := p.Control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Errorf("Control(127.0.0.1:80) = %v, want nil", err)
	}
}
