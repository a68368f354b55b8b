package targetverify_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
)

// host is a loopback target whose answer to the verification path the
// test sets, counting every request it gets.
type host struct {
	*httptest.Server
	mu       sync.Mutex
	handler  http.HandlerFunc
	requests atomic.Int64
}

func newHost(t *testing.T) *host {
	h := &host{handler: http.NotFound}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		h.mu.Lock()
		fn := h.handler
		h.mu.Unlock()
		fn(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *host) serve(fn http.HandlerFunc) {
	h.mu.Lock()
	h.handler = fn
	h.mu.Unlock()
}

// publish makes the host serve token at its verification path, as a user
// following the instructions would.
func (h *host) publish(token string) {
	h.serve(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != targetverify.Path(token) {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, token)
	})
}

func newVerifier(t *testing.T, cfg targetverify.Config) *targetverify.Verifier {
	st := store.New(redistest.Start(t).Client(t), store.Options{})
	return targetverify.New(st, cfg)
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestVerifyCreatesTokenThenFindsIt(t *testing.T) {
	v := newVerifier(t, targetverify.Config{})
	h := newHost(t)
	u := mustURL(t, h.URL+"/bench/path")
	first, err := v.Verify(t.Context(), "key-a", u)
	if err != nil {
		t.Fatal(err)
	}
	if first.Verified || len(first.Token) != 32 || first.Host != u.Host || first.CheckedAt.IsZero() {
		t.Fatalf("first Verify = %+v, want unverified with a 32-hex token for %s", first, u.Host)
	}
	if !strings.Contains(first.Detail, "404") {
		t.Errorf("first Verify detail = %q, want the 404 it got", first.Detail)
	}
	h.publish(first.Token)
	second, err := v.Verify(t.Context(), "key-a", u)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Verified || second.Token != first.Token {
		t.Fatalf("Verify after publishing = %+v, want verified with the same token", second)
	}
	other, err := v.Verify(t.Context(), "key-b", u)
	if err != nil {
		t.Fatal(err)
	}
	if other.Verified || other.Token == first.Token {
		t.Errorf("Verify for another key = %+v, want its own token, unverified", other)
	}
	list, err := v.List(t.Context(), "key-a")
	if err != nil || len(list) != 1 || !list[0].Verified {
		t.Errorf("List(key-a) = %+v, %v; want the one verified host", list, err)
	}
}

func TestVerifyRefusesWhatIsNotTheTokenFile(t *testing.T) {
	v := newVerifier(t, targetverify.Config{MaxBody: 64})
	elsewhere := newHost(t) // would serve any token: must never be asked
	elsewhere.serve(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/benchq-verify-"), ".txt"))
	})
	tests := []struct {
		name, detail string
		handler      http.HandlerFunc
	}{
		{"redirect", "redirects are not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
		}},
		{"path echoed in a 200 page", "line of its own", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "no such page: %s\n", r.URL.Path)
		}},
		{"token past the body cap", "line of its own", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s\n%s\n", strings.Repeat("x", 100), strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/benchq-verify-"), ".txt"))
		}},
		{"server error", "500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			h.serve(tt.handler)
			th, err := v.Verify(t.Context(), "key", mustURL(t, h.URL))
			if err != nil {
				t.Fatal(err)
			}
			if th.Verified || !strings.Contains(th.Detail, tt.detail) {
				t.Errorf("Verify = verified %v, detail %q; want unverified, detail mentioning %q", th.Verified, th.Detail, tt.detail)
			}
			if h.requests.Load() != 1 {
				t.Errorf("host got %d requests, want exactly the one verification GET", h.requests.Load())
			}
		})
	}
	if n := elsewhere.requests.Load(); n != 0 {
		t.Errorf("the redirect's destination got %d requests, want 0", n)
	}
}

// TestVerifyGoesThroughThePolicy: the fetch is a request to the target
// host, so a policy refusing loopback keeps it from connecting at all.
func TestVerifyGoesThroughThePolicy(t *testing.T) {
	strict, err := netguard.New(nil) // public addresses only
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, targetverify.Config{Dial: (&netguard.Dialer{Policy: strict}).DialContext})
	h := newHost(t)
	th, err := v.Verify(t.Context(), "key", mustURL(t, h.URL))
	if err != nil {
		t.Fatal(err)
	}
	if th.Verified || !strings.Contains(th.Detail, "refused") {
		t.Errorf("Verify = %+v, want unverified with the policy's refusal", th)
	}
	if n := h.requests.Load(); n != 0 {
		t.Errorf("host got %d requests through a policy that refuses it", n)
	}
}

func TestCheckSpecNamesEachUnverifiedTarget(t *testing.T) {
	v := newVerifier(t, targetverify.Config{})
	ok, bad := newHost(t), newHost(t)
	th, err := v.Verify(t.Context(), "key", mustURL(t, ok.URL))
	if err != nil {
		t.Fatal(err)
	}
	ok.publish(th.Token)
	targets := []job.TargetURL{
		{Field: "targets[0].url", URL: ok.URL + "/a"},
		{Field: "targets[1].url", URL: ok.URL + "/b"},
		{Field: "targets[2].ab", URL: bad.URL + "/c"},
	}
	err = v.CheckSpec(t.Context(), "key", targets)
	var ve *errcode.Error
	if !errors.Is(err, targetverify.ErrUnverified) || !errors.As(err, &ve) {
		t.Fatalf("CheckSpec = %v, want ErrUnverified with a ValidationError", err)
	}
	if len(ve.Problems) != 1 || ve.Problems[0].Field != "targets[2].ab" {
		t.Fatalf("problems = %+v, want only targets[2].ab", ve.Problems)
	}
	badHost, _ := targetverify.HostKey(mustURL(t, bad.URL))
	list, _ := v.List(t.Context(), "key")
	var token string
	for _, h := range list {
		if h.Host == badHost {
			token = h.Token
		}
	}
	if want := bad.URL + targetverify.Path(token); token == "" || !strings.Contains(ve.Problems[0].Message, want) {
		t.Errorf("message %q does not name the file to publish, %s", ve.Problems[0].Message, want)
	}
	if n := ok.requests.Load(); n != 2 {
		t.Errorf("verified host got %d requests, want 2 (Verify, then one per CheckSpec for its two targets)", n)
	}
	bad.publish(token)
	if err := v.CheckSpec(t.Context(), "key", targets); err != nil {
		t.Errorf("CheckSpec after publishing = %v, want nil", err)
	}
}

func TestHostKey(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://127.0.0.1:8081/x", "127.0.0.1:8081"},
		{"http://Example.COM./", "example.com:80"},
		{"https://example.com/", "example.com:443"},
		{"http://[::1]:9000/", "[::1]:9000"},
	}
	for _, tt := range tests {
		got, err := targetverify.HostKey(mustURL(t, tt.url))
		if err != nil || got != tt.want {
			t.Errorf("HostKey(%s) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
}

func TestVerifySpecPinsTheServingIP(t *testing.T) {
	v := newVerifier(t, targetverify.Config{})
	h := newHost(t)
	th, err := v.Verify(t.Context(), "key", mustURL(t, h.URL))
	if err != nil {
		t.Fatal(err)
	}
	h.publish(th.Token)
	pins, err := v.VerifySpec(t.Context(), "key", []job.TargetURL{{Field: "targets[0].url", URL: h.URL + "/a"}})
	if err != nil {
		t.Fatal(err)
	}
	want := netguard.Pins{th.Host: {netip.MustParseAddr("127.0.0.1")}}
	if !reflect.DeepEqual(pins, want) {
		t.Errorf("VerifySpec pins = %v, want %v", pins, want)
	}
}

// TestVerifySpecScreensBeforeFetching: what verification cannot vouch for
// is refused without a single request to any host.
func TestVerifySpecScreensBeforeFetching(t *testing.T) {
	v := newVerifier(t, targetverify.Config{MaxHosts: 3})
	h := newHost(t)
	u := mustURL(t, h.URL)
	many := func(n int) []job.TargetURL {
		var out []job.TargetURL
		for i := range n {
			out = append(out, job.TargetURL{Field: fmt.Sprintf("targets[%d].url", i), URL: fmt.Sprintf("http://127.0.0.%d:%s/", i+1, u.Port())})
		}
		return out
	}
	withHost := func(value string) []job.TargetURL {
		return []job.TargetURL{{Field: "targets[0].url", URL: h.URL + "/", HostHeaders: []job.HostHeader{
			{Field: `targets[0].request.headers["Host"]`, Value: value}}}}
	}
	tests := []struct {
		name      string
		targets   []job.TargetURL
		want      error
		wantField string
	}{
		{"Host header of another host", withHost("victim.example"), targetverify.ErrHostHeader, `targets[0].request.headers["Host"]`},
		{"Host header of another port", withHost("127.0.0.1:1"), targetverify.ErrHostHeader, `targets[0].request.headers["Host"]`},
		{"more hosts than the cap", many(4), targetverify.ErrTooManyHosts, "targets[3].url"},
		{"at the cap, unverified", many(3), targetverify.ErrUnverified, ""},
		{"Host header of the URL's host", withHost(strings.ToUpper(u.Hostname())), targetverify.ErrUnverified, ""},
		{"Host header with the URL's port", withHost(u.Host), targetverify.ErrUnverified, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.requests.Load()
			_, err := v.VerifySpec(t.Context(), "key", tt.targets)
			var ve *errcode.Error
			if !errors.Is(err, tt.want) || !errors.Is(err, job.ErrInvalid) || !errors.As(err, &ve) {
				t.Fatalf("VerifySpec = %v, want %v with a ValidationError", err, tt.want)
			}
			fetched := h.requests.Load() - before
			if tt.wantField == "" {
				if fetched == 0 {
					t.Errorf("no fetch made; want the hosts checked")
				}
				return
			}
			if fetched != 0 {
				t.Errorf("host got %d requests, want none before refusing", fetched)
			}
			if len(ve.Problems) != 1 || ve.Problems[0].Field != tt.wantField {
				t.Errorf("problems = %+v, want one for %s", ve.Problems, tt.wantField)
			}
		})
	}
}

// TestVerifySpecHasOneDeadline: hosts that accept and never answer cost
// one Deadline in all, not one Timeout each, and are reported unchecked.
func TestVerifySpecHasOneDeadline(t *testing.T) {
	var (
		targets []job.TargetURL
		mu      sync.Mutex
		held    []net.Conn
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	for i := range 4 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() { // accept, then hold the connection silent
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		targets = append(targets, job.TargetURL{Field: fmt.Sprintf("targets[%d].url", i), URL: "http://" + ln.Addr().String() + "/"})
	}
	v := newVerifier(t, targetverify.Config{Timeout: 5 * time.Second, Deadline: 300 * time.Millisecond})
	start := time.Now()
	_, err := v.VerifySpec(t.Context(), "key", targets)
	took := time.Since(start)
	var ve *errcode.Error
	if !errors.Is(err, targetverify.ErrUnverified) || !errors.As(err, &ve) || len(ve.Problems) != 4 {
		t.Fatalf("VerifySpec = %v, want all 4 hosts unverified", err)
	}
	if took > 3*time.Second {
		t.Errorf("VerifySpec took %v, want about the 300ms deadline, not a 5s timeout per host", took)
	}
	if !strings.Contains(ve.Problems[3].Message, "not checked") {
		t.Errorf("last problem = %q, want it unchecked past the deadline", ve.Problems[3].Message)
	}
}
