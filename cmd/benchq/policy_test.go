package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/redistest"
)

// stagingResolver sends every name under staging.test to 127.0.0.1, as
// an internal DNS zone an operator allowlists by glob would.
type stagingResolver struct{}

func (stagingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(host, ".staging.test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("stub resolver: no such host " + host)
}

// TestVerifyAndWebhooksHonourHostGlob: with --allow-targets
// '*.staging.test' on a policy that otherwise refuses loopback, a name
// under the glob resolving to 127.0.0.1 is verified, loaded and sent its
// webhook, all through the real dialers of the service: the verification
// client, the load dialer and the webhook client agree on the glob.
func TestVerifyAndWebhooksHonourHostGlob(t *testing.T) {
	policy, err := netguard.New([]string{"*.staging.test"})
	if err != nil {
		t.Fatal(err)
	}
	if policy.CheckIP(netip.MustParseAddr("127.0.0.1")) == nil {
		t.Fatal("the policy admits loopback by IP; the test would prove nothing")
	}
	rs := redistest.Start(t)
	m := startMainWith(t, func(cfg *config.Config) {
		cfg.RedisURL, cfg.VerifyTargets = rs.URL(), true
		cfg.WebhookBackoff = []time.Duration{100 * time.Millisecond}
	}, func(m *Main) { m.Policy, m.Resolver = policy, stagingResolver{} })

	h := newOwnedHost(t)
	_, port, _ := net.SplitHostPort(h.Listener.Addr().String())
	target := "http://app.staging.test:" + port
	var hooks atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks.Add(1)
	}))
	t.Cleanup(rc.Close)
	_, hookPort, _ := net.SplitHostPort(rc.Listener.Addr().String())

	// Verification client: the first fetch reaches the host (a 404, not a
	// refusal); after publishing, the host is verified.
	resp, b := postJSON(t, m.URL()+"/v1/targets/verify", map[string]string{"url": target})
	var th apiTargetHost
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &th) != nil || !strings.Contains(th.Detail, "404") {
		t.Fatalf("POST /v1/targets/verify = %d %s; want the host reached (404 before publishing)", resp.StatusCode, b)
	}
	h.publish(th.Token, 0)
	resp, b = postJSON(t, m.URL()+"/v1/targets/verify", map[string]string{"url": target})
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &th) != nil || !th.Verified {
		t.Fatalf("POST /v1/targets/verify after publishing = %d %s, want verified", resp.StatusCode, b)
	}

	// Load dialer and webhook client.
	spec := smallJob(target)
	spec["webhook"] = map[string]any{"url": fmt.Sprintf("http://hooks.staging.test:%s/hook", hookPort), "events": []string{"job.succeeded"}}
	j := submit(t, m.URL(), spec)
	if got := waitJob(t, m.URL(), j.ID, 30*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	if n := h.load.Load(); n < 20 {
		t.Errorf("host got %d load requests, want at least 20", n)
	}
	deadline := time.Now().Add(20 * time.Second)
	for hooks.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no webhook reached hooks.staging.test within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
