package job

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

func TestValidateTLS(t *testing.T) {
	ca := testservers.NewCA(t)
	client := ca.Issue(t, "client")
	tests := []struct {
		name string
		tls  *TLSOptions
		want []string // problem fields; nil: valid
	}{
		{"unset", nil, nil},
		{"everything valid", &TLSOptions{CAPEM: string(ca.CertPEM), ClientCertPEM: string(client.CertPEM), ClientKeyPEM: string(client.KeyPEM),
			MinVersion: "1.2", MaxVersion: "TLS1.3", CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, ServerName: "www.example.test"}, nil},
		{"key in the certificate bundle", &TLSOptions{ClientCertPEM: string(client.CertPEM) + string(client.KeyPEM)}, nil},
		{"unknown min_version", &TLSOptions{MinVersion: "1.4"}, []string{"request.tls.min_version"}},
		{"SSL3 max_version", &TLSOptions{MaxVersion: "SSL3"}, []string{"request.tls.max_version"}},
		{"min above max", &TLSOptions{MinVersion: "1.3", MaxVersion: "1.2"}, []string{"request.tls.min_version"}},
		{"unknown cipher", &TLSOptions{CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"}},
			[]string{"request.tls.cipher_suites[1]"}},
		{"TLS 1.3 cipher", &TLSOptions{CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}}, []string{"request.tls.cipher_suites[0]"}},
		{"ca not PEM", &TLSOptions{CAPEM: "hello"}, []string{"request.tls.ca_pem"}},
		{"key without certificate", &TLSOptions{ClientKeyPEM: string(client.KeyPEM)}, []string{"request.tls.client_cert_pem"}},
		{"certificate without key", &TLSOptions{ClientCertPEM: string(client.CertPEM)}, []string{"request.tls.client_cert_pem"}},
		{"key of another certificate", &TLSOptions{ClientCertPEM: string(client.CertPEM), ClientKeyPEM: string(ca.Issue(t, "x").KeyPEM)},
			[]string{"request.tls.client_cert_pem"}},
		{"server name with a space", &TLSOptions{ServerName: "a b"}, []string{"request.tls.server_name"}},
		{"ca too large", &TLSOptions{CAPEM: strings.Repeat("x", maxPEMBytes+1)}, []string{"request.tls.ca_pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			s.Request.TLS = tt.tls
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if diff := cmp.Diff(tt.want, fields(t, err)); diff != "" {
				t.Errorf("Validate fields mismatch (-want +got):\n%s\nerror: %v", diff, err)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), string(client.KeyPEM[40:80])) {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
}

func TestPlanTLS(t *testing.T) {
	ca := testservers.NewCA(t)
	s := Spec{
		Targets: []Target{
			{Name: "url", URL: "https://127.0.0.1:8443/"},
			// An ab line's flags lay over the job's tls.
			{Name: "ab", AB: "-f TLS1.2 -Z ECDHE-RSA-AES128-GCM-SHA256 --sni www.test -n 5 https://127.0.0.1:8443/"},
			{Name: "ab-insecure", AB: "--insecure -n 5 https://127.0.0.1:8443/"},
		},
		Request: Request{TLS: &TLSOptions{CAPEM: string(ca.CertPEM), MinVersion: "1.3"}},
		Sweep:   Sweep{Concurrency: []int{1}, Requests: []int{5}},
	}
	want := map[string]measure.TLS{
		"url": {CAPEM: ca.CertPEM, MinVersion: tls.VersionTLS13},
		"ab": {CAPEM: ca.CertPEM, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}, ServerName: "www.test"},
		"ab-insecure": {CAPEM: ca.CertPEM, MinVersion: tls.VersionTLS13, SkipVerify: true},
	}
	if err := s.Validate(DefaultLimits(), testservers.LoopbackOnly); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, p := range s.Points() {
		plan, err := s.Plan(p)
		if err != nil {
			t.Fatalf("Plan(%s): %v", p.Target, err)
		}
		if diff := cmp.Diff(want[p.Target], plan.TLS); diff != "" {
			t.Errorf("Plan(%s).TLS mismatch (-want +got):\n%s", p.Target, diff)
		}
	}
}

func TestABLineTLSFilesRefused(t *testing.T) {
	for _, line := range []string{"-E client.pem https://127.0.0.1:1/", "--cacert ca.pem https://127.0.0.1:1/"} {
		s := validSpec()
		s.Targets[0] = Target{Name: "a", AB: line}
		err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
		if err == nil || !strings.Contains(err.Error(), "request.tls") {
			t.Errorf("Validate(ab %q) = %v, want a refusal pointing at request.tls", line, err)
		}
	}
}

func TestRedactedTLS(t *testing.T) {
	client := testservers.NewCA(t).Issue(t, "client")
	s := validSpec()
	s.Request.TLS = &TLSOptions{ClientCertPEM: string(client.CertPEM), ClientKeyPEM: string(client.KeyPEM), MinVersion: "1.2"}
	s.Targets[1].Request = &Request{TLS: &TLSOptions{ClientCertPEM: string(client.CertPEM) + string(client.KeyPEM)}}
	r := s.Redacted()
	if got := r.Request.TLS; got.ClientKeyPEM != RedactedValue || got.ClientCertPEM != string(client.CertPEM) || got.MinVersion != "1.2" {
		t.Errorf("Redacted request.tls = %+v, want the key redacted and the rest kept", got)
	}
	if got := r.Targets[1].Request.TLS.ClientCertPEM; got != RedactedValue {
		t.Errorf("Redacted bundle with a key = %q, want %q", got, RedactedValue)
	}
	if s.Request.TLS.ClientKeyPEM != string(client.KeyPEM) {
		t.Error("Redacted modified the spec")
	}
}
