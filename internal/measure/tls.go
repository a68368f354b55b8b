package measure

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// TLS is how a run speaks TLS to its https:// targets. The zero value
// verifies the target's certificate against the system's roots, with Go's
// default versions (TLS 1.2 and 1.3) and cipher suites, and names the
// URL's host (or the plan's Host header) as the server. Verification is
// the default because a service that silently trusts any certificate
// would benchmark whatever answers; `benchq ab` sets SkipVerify itself,
// as ab verifies nothing.
type TLS struct {
	// SkipVerify accepts any certificate, for self-signed test servers.
	SkipVerify bool
	// CAPEM, if set, replaces the system's roots with the PEM certificates
	// it holds.
	CAPEM []byte
	// ClientCertPEM and ClientKeyPEM are a client certificate (chain) and
	// its private key, sent to servers that ask for one (ab -E). They may
	// be the same PEM bundle holding both. The key is a secret.
	ClientCertPEM []byte
	ClientKeyPEM  []byte
	// MinVersion and MaxVersion bound the protocol version (tls.VersionTLS10
	// ... tls.VersionTLS13); zero means Go's default for each end.
	MinVersion uint16
	MaxVersion uint16
	// CipherSuites, if set, are the only suites offered for TLS 1.0-1.2,
	// by IANA id (ParseCipherSuite). TLS 1.3's suites are not configurable
	// in Go; OpenSSL's cipher list (ab -Z) does not touch them either.
	CipherSuites []uint16
	// ServerName, if set, is sent as SNI and verified in the certificate
	// instead of the URL's host.
	ServerName string
}

// ErrInvalidTLS is wrapped by every error of TLS.Config and of the name
// parsers below: the options can never make a handshake.
var ErrInvalidTLS = errors.New("measure: invalid TLS options")

// IsZero reports whether t asks for nothing but the defaults.
func (t TLS) IsZero() bool {
	return !t.SkipVerify && len(t.CAPEM) == 0 && len(t.ClientCertPEM) == 0 && len(t.ClientKeyPEM) == 0 &&
		t.MinVersion == 0 && t.MaxVersion == 0 && len(t.CipherSuites) == 0 && t.ServerName == ""
}

// Config builds the client configuration every engine path uses for t:
// the one place where the options become a *tls.Config, so the HTTP/1.x
// and HTTP/2 paths handshake alike. A path clones the result to add its
// own settings (NextProtos, a per-target ServerName when t names none).
// Sessions are not resumed (no ClientSessionCache): every new connection
// pays a full handshake, as ab's do. Errors wrap ErrInvalidTLS and name
// the option.
func (t TLS) Config() (*tls.Config, error) {
	c := &tls.Config{
		InsecureSkipVerify: t.SkipVerify, //nolint:gosec // explicit option, for self-signed targets
		MinVersion:         t.MinVersion,
		MaxVersion:         t.MaxVersion,
		ServerName:         t.ServerName,
	}
	for _, v := range []struct {
		name string
		v    uint16
	}{{"min_version", t.MinVersion}, {"max_version", t.MaxVersion}} {
		if v.v != 0 && (v.v < tls.VersionTLS10 || v.v > tls.VersionTLS13) {
			return nil, fmt.Errorf("%w: %s: 0x%04x is not TLS 1.0..1.3", ErrInvalidTLS, v.name, v.v)
		}
	}
	if t.MinVersion != 0 && t.MaxVersion != 0 && t.MinVersion > t.MaxVersion {
		return nil, fmt.Errorf("%w: min_version %s is above max_version %s", ErrInvalidTLS,
			TLSVersionName(t.MinVersion), TLSVersionName(t.MaxVersion))
	}
	if len(t.CAPEM) > 0 {
		pool, err := certPool(t.CAPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: ca_pem: %w", ErrInvalidTLS, err)
		}
		c.RootCAs = pool
	}
	if len(t.ClientCertPEM) > 0 || len(t.ClientKeyPEM) > 0 {
		key := t.ClientKeyPEM
		if len(key) == 0 {
			key = t.ClientCertPEM // one bundle with both, as ab -E takes
		}
		cert, err := tls.X509KeyPair(t.ClientCertPEM, key)
		if err != nil {
			// The parser's message names no key material, only what is wrong.
			return nil, fmt.Errorf("%w: client certificate: %w", ErrInvalidTLS, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	for _, id := range t.CipherSuites {
		if _, err := cipherSuite(id); err != nil {
			return nil, err
		}
	}
	if len(t.CipherSuites) > 0 {
		c.CipherSuites = slices.Clone(t.CipherSuites)
	}
	return c, nil
}

// certPool parses every CERTIFICATE block of a PEM bundle; a bundle with
// none, or a block that does not parse, is an error.
func certPool(bundle []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := bundle; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, errors.New("no PEM CERTIFICATE block found")
	}
	return pool, nil
}

// ParseTLSVersion reads a protocol version as the job spec writes it
// ("1.0", "1.1", "1.2", "1.3") or as ab's -f does ("TLS1", "TLS1.1",
// "TLS1.2", "TLS1.3"). SSL 2 and 3 are refused: Go never spoke them, and
// they are broken.
func ParseTLSVersion(name string) (uint16, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "1.0", "TLS1", "TLS1.0":
		return tls.VersionTLS10, nil
	case "1.1", "TLS1.1":
		return tls.VersionTLS11, nil
	case "1.2", "TLS1.2":
		return tls.VersionTLS12, nil
	case "1.3", "TLS1.3":
		return tls.VersionTLS13, nil
	case "SSL2", "SSL3", "SSLV2", "SSLV3", "2.0", "3.0":
		return 0, fmt.Errorf("%w: %s is not supported: SSL 2 and 3 are broken and Go never spoke them; use TLS 1.0 to 1.3", ErrInvalidTLS, name)
	}
	return 0, fmt.Errorf("%w: unknown TLS version %q: want 1.0, 1.1, 1.2 or 1.3", ErrInvalidTLS, name)
}

// TLSVersionName is the spec's name of version v ("1.2"), or its hex value.
func TLSVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}

// ParseCipherSuite reads a cipher suite by its Go (IANA) name, such as
// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, secure or not, as Go implements
// it. TLS 1.3 suites are refused: Go always offers all three.
func ParseCipherSuite(name string) (uint16, error) {
	want := strings.ToUpper(strings.TrimSpace(name))
	for _, cs := range allSuites() {
		if cs.Name == want {
			if isTLS13Only(cs) {
				return 0, fmt.Errorf("%w: cipher suite %s is TLS 1.3's, which Go always offers and cannot restrict; set max_version 1.2 to choose a suite", ErrInvalidTLS, name)
			}
			return cs.ID, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown cipher suite %q: want a Go name such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", ErrInvalidTLS, name)
}

// CipherSuiteNames lists the names ParseCipherSuite takes, secure first.
func CipherSuiteNames() []string {
	var names []string
	for _, cs := range allSuites() {
		if !isTLS13Only(cs) {
			names = append(names, cs.Name)
		}
	}
	return names
}

func cipherSuite(id uint16) (*tls.CipherSuite, error) {
	for _, cs := range allSuites() {
		if cs.ID == id && !isTLS13Only(cs) {
			return cs, nil
		}
	}
	return nil, fmt.Errorf("%w: cipher_suites: 0x%04x is not a TLS 1.0-1.2 suite Go implements", ErrInvalidTLS, id)
}

func allSuites() []*tls.CipherSuite {
	return append(tls.CipherSuites(), tls.InsecureCipherSuites()...)
}

func isTLS13Only(cs *tls.CipherSuite) bool {
	return len(cs.SupportedVersions) == 1 && cs.SupportedVersions[0] == tls.VersionTLS13
}

// TLSReason names why a TLS handshake failed, for the report and the
// user's next step.
type TLSReason int

// The reasons TLSHandshakeReason tells apart.
const (
	TLSOther             TLSReason = iota // none of the below (a reset, an alert not listed)
	TLSUnknownAuthority                   // the certificate is signed by no trusted CA
	TLSBadCertificate                     // the server's certificate is expired, for another name, or unusable
	TLSClientCertificate                  // the server refused the client's certificate, or wanted one
	TLSProtocolVersion                    // no TLS version both ends allow
	TLSHandshakeFailure                   // the server found nothing in common (cipher suites, curves)
	TLSNotTLS                             // the server answered something that is not TLS (plain HTTP)
)

// TLSFailures counts failed handshakes by reason; their sum is
// Failures.TLSHandshake.
type TLSFailures struct {
	UnknownAuthority  int64 `json:"unknown_authority,omitempty"`
	BadCertificate    int64 `json:"bad_certificate,omitempty"`
	ClientCertificate int64 `json:"client_certificate,omitempty"`
	ProtocolVersion   int64 `json:"protocol_version,omitempty"`
	HandshakeFailure  int64 `json:"handshake_failure,omitempty"`
	NotTLS            int64 `json:"not_tls,omitempty"`
	Other             int64 `json:"other,omitempty"`
}

// Add counts one failed handshake of reason r.
func (f *TLSFailures) Add(r TLSReason) {
	switch r {
	case TLSUnknownAuthority:
		f.UnknownAuthority++
	case TLSBadCertificate:
		f.BadCertificate++
	case TLSClientCertificate:
		f.ClientCertificate++
	case TLSProtocolVersion:
		f.ProtocolVersion++
	case TLSHandshakeFailure:
		f.HandshakeFailure++
	case TLSNotTLS:
		f.NotTLS++
	default:
		f.Other++
	}
}

// Merge adds o's counts to f.
func (f *TLSFailures) Merge(o TLSFailures) {
	f.UnknownAuthority += o.UnknownAuthority
	f.BadCertificate += o.BadCertificate
	f.ClientCertificate += o.ClientCertificate
	f.ProtocolVersion += o.ProtocolVersion
	f.HandshakeFailure += o.HandshakeFailure
	f.NotTLS += o.NotTLS
	f.Other += o.Other
}

// IsZero reports whether no handshake failed.
func (f TLSFailures) IsZero() bool { return f == TLSFailures{} }

// Hints gives one line of advice per reason seen, naming it, for a report
// to print under the generic TLS handshake hint.
func (f TLSFailures) Hints() []string {
	var hints []string
	add := func(n int64, hint string) {
		if n > 0 {
			hints = append(hints, fmt.Sprintf("tls handshake, %s (%d)", hint, n))
		}
	}
	add(f.UnknownAuthority, "unknown authority: the certificate is signed by no CA this run trusts; give the CA bundle (request.tls.ca_pem, --cacert) or skip verification for a self-signed target (request.tls.insecure_skip_verify, --insecure)")
	add(f.BadCertificate, "bad certificate: the server's certificate is expired, not yet valid or for another name; check it, or name the server it is for (request.tls.server_name, --sni)")
	add(f.ClientCertificate, "client certificate: the server wants a client certificate it accepts; give one (request.tls.client_cert_pem and client_key_pem, -E)")
	add(f.ProtocolVersion, "protocol version: the server allows no TLS version in this run's range; widen min_version/max_version (-f)")
	add(f.HandshakeFailure, "handshake failure: the server accepts none of the offered cipher suites or curves; check cipher_suites (-Z)")
	add(f.NotTLS, "not TLS: the server answered plain HTTP; use http:// for this port")
	add(f.Other, "other: the connection failed mid-handshake (reset, timeout or an unexpected alert)")
	return hints
}

// String is the reason as a report names it.
func (r TLSReason) String() string {
	switch r {
	case TLSUnknownAuthority:
		return "unknown authority"
	case TLSBadCertificate:
		return "bad certificate"
	case TLSClientCertificate:
		return "client certificate refused"
	case TLSProtocolVersion:
		return "protocol version"
	case TLSHandshakeFailure:
		return "handshake failure"
	case TLSNotTLS:
		return "not TLS"
	}
	return "other"
}
