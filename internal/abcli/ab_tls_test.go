package abcli

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/testservers"
)

// TestABTLSFlags runs `benchq ab` against real loopback TLS servers with
// ab's -f, -Z, -E and benchq's --cacert, --verify and --sni: ab's default
// verifies nothing; asked to verify, an untrusted certificate stops the
// run with ab's SSL handshake failure and the reason.
func TestABTLSFlags(t *testing.T) {
	ts := testservers.StartTLSTargets(t)

	dir := t.TempDir()
	write := func(name string, parts ...[]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(parts, nil), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile := write("ca.pem", ts.CA.CertPEM)
	certFile := write("client.pem", ts.Client.CertPEM, ts.Client.KeyPEM) // ab -E: certificate and key in one file

	tests := []struct {
		name     string
		args     []string
		wantCode int
		stdout   string // in the report
		stderr   string // on stderr
	}{
		{"self-signed, ab's default", []string{ts.SelfSigned}, 0, "SSL/TLS Protocol:       TLSv1.3,", ""},
		{"self-signed, --verify", []string{"--verify", ts.SelfSigned}, 1, "", "benchq ab: unknown authority: "},
		{"CA bundle, --sni of the certificate", []string{"--cacert", caFile, "--sni", "server.test", "-E", certFile, ts.Mutual}, 0, "Complete requests:      10", ""},
		{"CA bundle, another --sni", []string{"--cacert", caFile, "--sni", "other.test", "-E", certFile, ts.Mutual}, 1, "", "benchq ab: bad certificate: "},
		{"client certificate missing", []string{"--cacert", caFile, ts.Mutual}, 1, "", "benchq ab: client certificate refused: "},
		{"client certificate with -E", []string{"-E", certFile, ts.Mutual}, 0, "Complete requests:      10", ""},
		{"-f TLS1.2 to a TLS 1.3-only server", []string{"-f", "TLS1.2", ts.TLS13}, 1, "", "benchq ab: protocol version: "},
		{"-f TLS1.3", []string{"-f", "TLS1.3", ts.TLS13}, 0, "SSL/TLS Protocol:       TLSv1.3,", ""},
		{"-Z picks the suite", []string{"-Z", "ECDHE-ECDSA-AES256-GCM-SHA384", ts.TLS12}, 0,
			"SSL/TLS Protocol:       TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,256,256", ""},
		{"-f SSL3", []string{"-f", "SSL3", ts.SelfSigned}, 1, "", "SSL 2 and 3 are broken"},
		{"-E file missing", []string{"-E", filepath.Join(dir, "none.pem"), ts.SelfSigned}, 1, "", "ab: Could not open client certificate file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-n", "10", "-c", "2"}, tt.args...)
			code, stdout, stderr := runABTest(t, context.Background(), args...)
			if code != tt.wantCode || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("benchq ab %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d, stdout with %q, stderr with %q",
					args, code, stdout, stderr, tt.wantCode, tt.stdout, tt.stderr)
			}
			if tt.wantCode != 0 && tt.stdout == "" && strings.Contains(stderr, "SSL handshake failed") &&
				!strings.HasPrefix(stderr, "SSL handshake failed (1).\n") {
				t.Errorf("stderr = %q, want ab's line first", stderr)
			}
			if strings.Contains(stderr, "PRIVATE KEY") {
				t.Errorf("stderr shows the key: %q", stderr)
			}
		})
	}
}

// TestABTLSJSONHandshake: the JSON result has the handshake as its own
// connection-time phase, while the text report keeps ab's table.
func TestABTLSJSONHandshake(t *testing.T) {
	self := testservers.SelfSigned(t)
	url := testservers.StartTLS(t, &tls.Config{Certificates: []tls.Certificate{self.TLS}},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("x")) })) + "/"
	code, stdout, stderr := runABTest(t, context.Background(), "--json", "-n", "20", "-c", "2", url)
	if code != 0 {
		t.Fatalf("benchq ab --json = %d, stderr %s", code, stderr)
	}
	var r abreport.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout)
	}
	if r.TLSHandshakes != 20 || r.TLSHandshakeMs == nil || r.TLSHandshakeMs.Max <= 0 ||
		r.TLSHandshakeMs.Max > r.ConnectionTimesMs.Connect.Max || r.TLSFailures != nil {
		t.Errorf("tls_handshakes %d, tls_handshake_ms %+v, connect %+v, tls_failures %+v: want 20 handshakes within connect and no failures",
			r.TLSHandshakes, r.TLSHandshakeMs, r.ConnectionTimesMs.Connect, r.TLSFailures)
	}
	_, text, _ := runABTest(t, context.Background(), "-n", "20", "-c", "2", url)
	if strings.Contains(strings.ToLower(text), "handshake") {
		t.Errorf("ab's text report names the handshake:\n%s", text)
	}
}
