package testservers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority made for one test: it issues the
// certificates of the test's TLS servers and clients, and its CertPEM is the
// bundle a client trusts to verify them.
type CA struct {
	CertPEM []byte
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	serial  atomic.Int64
}

// Cert is an issued certificate with its private key, in PEM and ready
// for crypto/tls.
type Cert struct {
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// NewCA makes a fresh CA, valid for an hour around now.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "benchq test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testservers: CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testservers: parse CA certificate: %v", err)
	}
	ca := &CA{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key}
	ca.serial.Store(1)
	return ca
}

// Pool is a pool holding the CA alone, for a server verifying clients.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Issue signs a certificate for name, usable by a server and a client:
// its names are name, localhost, 127.0.0.1 and ::1.
func (ca *CA) Issue(t testing.TB, name string) Cert {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial.Add(1)),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("testservers: certificate for %s: %v", name, err)
	}
	return newCert(t, der, key)
}

// SelfSigned makes a certificate for 127.0.0.1, ::1 and localhost signed
// by its own key: what a test server usually has, trusted by nobody.
func SelfSigned(t testing.TB) Cert {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testservers: self-signed certificate: %v", err)
	}
	return newCert(t, der, key)
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testservers: key: %v", err)
	}
	return key
}

func newCert(t testing.TB, der []byte, key *ecdsa.PrivateKey) Cert {
	t.Helper()
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("testservers: marshal key: %v", err)
	}
	c := Cert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
	if c.TLS, err = tls.X509KeyPair(c.CertPEM, c.KeyPEM); err != nil {
		t.Fatalf("testservers: key pair: %v", err)
	}
	return c
}

// StartTLS serves h over TLS with cfg (its certificates, client auth,
// versions and suites) on a free 127.0.0.1 port until the test ends, and
// returns its https:// URL without a trailing slash. HTTP/2 is not
// offered unless cfg.NextProtos asks for it.
func StartTLS(t testing.TB, cfg *tls.Config, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = cfg.Clone()
	// The handshakes tests make fail on purpose are not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// StartPlain serves h over plain HTTP on a free 127.0.0.1 port until the
// test ends and returns its http:// URL: the wrong port for an https://
// client.
func StartPlain(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TLSTargets are loopback HTTPS servers answering "secure", one for each
// way a TLS option decides a handshake, with the certificates to reach
// them. Each URL ends in "/".
type TLSTargets struct {
	CA     *CA  // signed Server's and Client's certificates
	Client Cert // "client", of CA
	// SelfSigned has a self-signed certificate; Signed, CA's certificate
	// for "server.test"; Mutual, the same and it wants a client
	// certificate of CA; TLS13 allows TLS 1.3 only, TLS12 at most 1.2
	// (both self-signed); Plain is an https:// URL of a plain HTTP port.
	SelfSigned, Signed, Mutual, TLS13, TLS12, Plain string
}

// StartTLSTargets starts every server of TLSTargets until the test ends.
func StartTLSTargets(t testing.TB) TLSTargets {
	t.Helper()
	ca := NewCA(t)
	server := ca.Issue(t, "server.test")
	self := SelfSigned(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("secure")) })
	start := func(cfg *tls.Config) string { return StartTLS(t, cfg, ok) + "/" }
	return TLSTargets{
		CA: ca, Client: ca.Issue(t, "client"),
		SelfSigned: start(&tls.Config{Certificates: []tls.Certificate{self.TLS}}),
		Signed:     start(&tls.Config{Certificates: []tls.Certificate{server.TLS}}),
		Mutual: start(&tls.Config{Certificates: []tls.Certificate{server.TLS},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}),
		TLS13: start(&tls.Config{Certificates: []tls.Certificate{self.TLS}, MinVersion: tls.VersionTLS13}),
		TLS12: start(&tls.Config{Certificates: []tls.Certificate{self.TLS}, MaxVersion: tls.VersionTLS12}),
		Plain: "https://" + strings.TrimPrefix(StartPlain(t, ok), "http://") + "/",
	}
}
