package loadgen

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// TestRunTLSOptions runs against real loopback TLS servers: each option
// either lets the handshakes through (every request completes, each new
// connection's handshake timed) or fails them with the reason named.
func TestRunTLSOptions(t *testing.T) {
	ts := testservers.StartTLSTargets(t)

	tests := []struct {
		name   string
		url    string
		tls    measure.TLS
		reason measure.TLSFailures // zero: every request completes
		proto  string              // prefix of the negotiated protocol line
	}{
		{"self-signed refused by default", ts.SelfSigned, measure.TLS{}, measure.TLSFailures{UnknownAuthority: 1}, ""},
		{"self-signed with skip-verify", ts.SelfSigned, measure.TLS{SkipVerify: true}, measure.TLSFailures{}, "TLSv1.3,TLS_"},
		{"signed by a CA in the bundle", ts.Signed, measure.TLS{CAPEM: ts.CA.CertPEM}, measure.TLSFailures{}, "TLSv1.3,"},
		{"CA bundle but another name", ts.Signed, measure.TLS{CAPEM: ts.CA.CertPEM, ServerName: "other.test"}, measure.TLSFailures{BadCertificate: 1}, ""},
		{"CA bundle and its name as SNI", ts.Signed, measure.TLS{CAPEM: ts.CA.CertPEM, ServerName: "server.test"}, measure.TLSFailures{}, "TLSv1.3,"},
		{"client certificate required, none given", ts.Mutual, measure.TLS{CAPEM: ts.CA.CertPEM}, measure.TLSFailures{ClientCertificate: 1}, ""},
		{"client certificate given", ts.Mutual, measure.TLS{CAPEM: ts.CA.CertPEM, ClientCertPEM: ts.Client.CertPEM, ClientKeyPEM: ts.Client.KeyPEM}, measure.TLSFailures{}, "TLSv1.3,"},
		{"TLS 1.3-only server, max 1.2", ts.TLS13, measure.TLS{SkipVerify: true, MaxVersion: tls.VersionTLS12}, measure.TLSFailures{ProtocolVersion: 1}, ""},
		{"TLS 1.2-only server, min 1.3", ts.TLS12, measure.TLS{SkipVerify: true, MinVersion: tls.VersionTLS13}, measure.TLSFailures{ProtocolVersion: 1}, ""},
		{"cipher suite chosen", ts.TLS12, measure.TLS{SkipVerify: true, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}},
			measure.TLSFailures{}, "TLSv1.2,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,256,256"},
		{"cipher suite the server lacks", ts.TLS12, measure.TLS{SkipVerify: true, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
			measure.TLSFailures{HandshakeFailure: 1}, ""},
		{"https to a plain port", ts.Plain, measure.TLS{SkipVerify: true}, measure.TLSFailures{NotTLS: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n, c = 20, 2
			g := &stubGuard{}
			m := run(t, measure.Plan{URLs: []string{tt.url}, Requests: n, Concurrency: c, TLS: tt.tls, Guard: g})
			if tt.reason.IsZero() {
				checkEq(t, "Complete", m.Complete, n)
				checkEq(t, "Failed", m.Failed, 0)
				// Without keep-alive every request opens, and times, its
				// own handshake.
				checkEq(t, "Handshake.Count", m.Handshake.Count, n)
				if m.Handshake.Max <= 0 || m.Handshake.Max > m.Connect.Max {
					t.Errorf("Handshake max %dµs, Connect max %dµs: want a handshake inside the connect phase", m.Handshake.Max, m.Connect.Max)
				}
				if !strings.HasPrefix(m.TLSProtocol, tt.proto) {
					t.Errorf("TLSProtocol = %q, want %s...", m.TLSProtocol, tt.proto)
				}
				return
			}
			checkEq(t, "Complete", m.Complete, 0)
			checkEq(t, "Failures.Connect", m.Failures.Connect, 0)
			if m.Failures.TLSHandshake < 1 || m.Failures.TLSHandshake > c {
				t.Errorf("Failures.TLSHandshake = %d, want 1..%d (the run aborts at the first)", m.Failures.TLSHandshake, c)
			}
			got := m.TLSFailures
			// Normalize counts to 1 to compare the reason alone.
			norm := func(v *int64) {
				if *v > 0 {
					*v = 1
				}
			}
			for _, v := range []*int64{&got.UnknownAuthority, &got.BadCertificate, &got.ClientCertificate, &got.ProtocolVersion, &got.HandshakeFailure, &got.NotTLS, &got.Other} {
				norm(v)
			}
			if got != tt.reason {
				t.Errorf("TLSFailures = %+v, want %+v", m.TLSFailures, tt.reason)
			}
			if !strings.HasPrefix(m.Aborted, "SSL handshake failed (1): ") {
				t.Errorf("Aborted = %q, want ab's SSL handshake failed (1): ...", m.Aborted)
			}
			checkEq(t, "Handshake.Count", m.Handshake.Count, 0)
		})
	}
}

// TestRunTLSKeepAliveHandshakesOncePerConnection: with keep-alive, one
// handshake per connection, however many requests it carries.
func TestRunTLSKeepAliveHandshakesOncePerConnection(t *testing.T) {
	self := testservers.SelfSigned(t)
	url := testservers.StartTLS(t, &tls.Config{Certificates: []tls.Certificate{self.TLS}},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("k")) }))
	g := &stubGuard{}
	m := run(t, measure.Plan{URLs: []string{url}, Requests: 200, Concurrency: 2, KeepAlive: true, TLS: measure.TLS{SkipVerify: true}, Guard: g})
	checkEq(t, "Complete", m.Complete, 200)
	checkEq(t, "Handshake.Count", m.Handshake.Count, g.admits.Load())
}

// TestRunTLSGuardRefuses: the address policy still refuses at connect
// time on a TLS run, before any handshake.
func TestRunTLSGuardRefuses(t *testing.T) {
	self := testservers.SelfSigned(t)
	url := testservers.StartTLS(t, &tls.Config{Certificates: []tls.Certificate{self.TLS}},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	refuse := errors.New("denied by policy")
	g := &stubGuard{admit: func(netip.Addr) error { return refuse }}
	m, err := Run(t.Context(), measure.Plan{URLs: []string{url}, Requests: 5, TLS: measure.TLS{SkipVerify: true}, Guard: g})
	if !errors.Is(err, measure.ErrUnreachable) || !errors.Is(err, refuse) {
		t.Fatalf("Run = %v, want the guard's refusal wrapping ErrUnreachable", err)
	}
	checkEq(t, "Handshake.Count", m.Handshake.Count, 0)
	checkEq(t, "Failures.TLSHandshake", m.Failures.TLSHandshake, 0)
}
