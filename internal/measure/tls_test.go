package measure_test

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

func TestTLSConfig(t *testing.T) {
	ca := testservers.NewCA(t)
	client := ca.Issue(t, "client")
	tests := []struct {
		name    string
		tls     measure.TLS
		wantErr string // "" for success
		check   func(t *testing.T, c *tls.Config)
	}{
		{"zero verifies", measure.TLS{}, "", func(t *testing.T, c *tls.Config) {
			if c.InsecureSkipVerify || c.RootCAs != nil || c.ClientSessionCache != nil {
				t.Errorf("config = %+v, want verification against system roots and no session cache", c)
			}
		}},
		{"skip verify", measure.TLS{SkipVerify: true}, "", func(t *testing.T, c *tls.Config) {
			if !c.InsecureSkipVerify {
				t.Error("InsecureSkipVerify = false")
			}
		}},
		{"ca bundle", measure.TLS{CAPEM: ca.CertPEM}, "", func(t *testing.T, c *tls.Config) {
			if c.RootCAs == nil {
				t.Error("RootCAs = nil")
			}
		}},
		{"client cert and key in one bundle", measure.TLS{ClientCertPEM: append(append([]byte(nil), client.CertPEM...), client.KeyPEM...)}, "", func(t *testing.T, c *tls.Config) {
			if len(c.Certificates) != 1 {
				t.Errorf("Certificates = %d, want 1", len(c.Certificates))
			}
		}},
		{"client cert and key apart", measure.TLS{ClientCertPEM: client.CertPEM, ClientKeyPEM: client.KeyPEM}, "", nil},
		{"versions and suites", measure.TLS{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, ServerName: "example.test"}, "", func(t *testing.T, c *tls.Config) {
			if c.MinVersion != tls.VersionTLS12 || c.MaxVersion != tls.VersionTLS12 || len(c.CipherSuites) != 1 || c.ServerName != "example.test" {
				t.Errorf("config = %+v", c)
			}
		}},
		{"min above max", measure.TLS{MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS12}, "min_version 1.3 is above max_version 1.2", nil},
		{"unknown version", measure.TLS{MaxVersion: 0x0300}, "max_version: 0x0300 is not TLS 1.0..1.3", nil},
		{"ca not PEM", measure.TLS{CAPEM: []byte("not a certificate")}, "ca_pem: no PEM CERTIFICATE block found", nil},
		{"key without its certificate", measure.TLS{ClientKeyPEM: client.KeyPEM}, "client certificate: ", nil},
		{"cert without key", measure.TLS{ClientCertPEM: client.CertPEM}, "client certificate: ", nil},
		{"tls 1.3 suite id", measure.TLS{CipherSuites: []uint16{tls.TLS_AES_128_GCM_SHA256}}, "cipher_suites: 0x1301", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.tls.Config()
			if tt.wantErr != "" {
				if !errors.Is(err, measure.ErrInvalidTLS) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Config() error = %v, want ErrInvalidTLS with %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "PRIVATE KEY") {
					t.Errorf("error %q shows key material", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Config(): %v", err)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestParseTLSVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    uint16
		wantErr string
	}{
		{"1.0", tls.VersionTLS10, ""}, {"TLS1", tls.VersionTLS10, ""}, {"1.1", tls.VersionTLS11, ""},
		{"TLS1.1", tls.VersionTLS11, ""}, {"1.2", tls.VersionTLS12, ""}, {"tls1.2", tls.VersionTLS12, ""},
		{"1.3", tls.VersionTLS13, ""}, {"TLS1.3", tls.VersionTLS13, ""},
		{"SSL3", 0, "SSL 2 and 3 are broken"}, {"SSL2", 0, "SSL 2 and 3 are broken"},
		{"1.4", 0, "unknown TLS version"}, {"", 0, "unknown TLS version"},
	}
	for _, tt := range tests {
		got, err := measure.ParseTLSVersion(tt.in)
		if tt.wantErr != "" {
			if !errors.Is(err, measure.ErrInvalidTLS) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTLSVersion(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseTLSVersion(%q) = %#x, %v, want %#x", tt.in, got, err, tt.want)
		}
		if n := measure.TLSVersionName(got); "1."+n[2:] != n {
			t.Errorf("TLSVersionName(%#x) = %q", got, n)
		}
	}
}

func TestParseCipherSuite(t *testing.T) {
	tests := []struct {
		in      string
		want    uint16
		wantErr string
	}{
		{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ""},
		{"tls_ecdhe_ecdsa_with_chacha20_poly1305_sha256", tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, ""},
		{"TLS_RSA_WITH_AES_128_CBC_SHA", tls.TLS_RSA_WITH_AES_128_CBC_SHA, ""}, // insecure, still offered when asked
		{"TLS_AES_128_GCM_SHA256", 0, "TLS 1.3's"},
		{"ECDHE-RSA-AES128-GCM-SHA256", 0, "unknown cipher suite"},
	}
	for _, tt := range tests {
		got, err := measure.ParseCipherSuite(tt.in)
		if tt.wantErr != "" {
			if !errors.Is(err, measure.ErrInvalidTLS) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCipherSuite(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCipherSuite(%q) = %#x, %v, want %#x", tt.in, got, err, tt.want)
		}
	}
	if names := measure.CipherSuiteNames(); len(names) < 10 || names[0] == "TLS_AES_128_GCM_SHA256" {
		t.Errorf("CipherSuiteNames() = %q", names)
	}
}
