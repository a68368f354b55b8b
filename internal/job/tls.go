package job

import (
	"errors"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/measure"
)

// TLSOptions is how a job speaks TLS to its https:// targets. Unset, the
// worker verifies every certificate against its system's roots with Go's
// default versions (TLS 1.2 and 1.3) and cipher suites: skipping
// verification is asked for, never assumed, even for an ab line (where
// --insecure asks for it).
type TLSOptions struct {
	// InsecureSkipVerify accepts any certificate, for self-signed targets.
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	// CAPEM is a PEM bundle of CA certificates that replace the system's
	// roots.
	CAPEM string `json:"ca_pem,omitempty"`
	// ClientCertPEM is a client certificate (chain) in PEM, sent to a
	// server that asks for one (ab -E); ClientKeyPEM its private key, a
	// secret shown only as "[redacted]". The key may instead follow the
	// certificate in ClientCertPEM, as in ab -E's file.
	ClientCertPEM string `json:"client_cert_pem,omitempty"`
	ClientKeyPEM  string `json:"client_key_pem,omitempty"`
	// MinVersion and MaxVersion bound the TLS version: "1.0", "1.1",
	// "1.2" or "1.3" (ab -f's TLS1, TLS1.1... too).
	MinVersion string `json:"min_version,omitempty" enums:"1.0,1.1,1.2,1.3" example:"1.2"`
	MaxVersion string `json:"max_version,omitempty" enums:"1.0,1.1,1.2,1.3" example:"1.3"`
	// CipherSuites are the only suites offered for TLS 1.0 to 1.2, by Go
	// (IANA) name; TLS 1.3's are always Go's three.
	CipherSuites []string `json:"cipher_suites,omitempty" maxItems:"64" example:"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"`
	// ServerName is sent as SNI and verified in the certificate instead of
	// the URL's host.
	ServerName string `json:"server_name,omitempty" example:"www.example.test"`
}

// maxPEMBytes bounds each PEM field: a CA bundle of a few hundred
// certificates, far below the API's cap on a whole spec.
const maxPEMBytes = 256 << 10

// tlsProblem is one problem of a TLSOptions, at a field under "tls".
type tlsProblem struct{ field, msg string }

// plan converts the options to the engine's, with every problem found;
// a nil o is the default.
func (o *TLSOptions) plan() (measure.TLS, []tlsProblem) {
	if o == nil {
		return measure.TLS{}, nil
	}
	var probs []tlsProblem
	bad := func(field, msg string) { probs = append(probs, tlsProblem{field, msg}) }
	t := measure.TLS{
		SkipVerify:    o.InsecureSkipVerify,
		CAPEM:         pemBytes(o.CAPEM),
		ClientCertPEM: pemBytes(o.ClientCertPEM),
		ClientKeyPEM:  pemBytes(o.ClientKeyPEM),
		ServerName:    o.ServerName,
	}
	for _, v := range []struct {
		field, name string
		dst         *uint16
	}{{"min_version", o.MinVersion, &t.MinVersion}, {"max_version", o.MaxVersion, &t.MaxVersion}} {
		if v.name == "" {
			continue
		}
		ver, err := measure.ParseTLSVersion(v.name)
		if err != nil {
			bad(v.field, clientMessage(err))
		}
		*v.dst = ver
	}
	for i, name := range o.CipherSuites {
		id, err := measure.ParseCipherSuite(name)
		if err != nil {
			bad("cipher_suites["+strconv.Itoa(i)+"]", clientMessage(err))
			continue
		}
		t.CipherSuites = append(t.CipherSuites, id)
	}
	for _, f := range []struct{ field, v string }{{"ca_pem", o.CAPEM}, {"client_cert_pem", o.ClientCertPEM}, {"client_key_pem", o.ClientKeyPEM}} {
		if len(f.v) > maxPEMBytes {
			bad(f.field, strconv.Itoa(len(f.v))+" bytes are above the limit of "+strconv.Itoa(maxPEMBytes))
		}
	}
	if o.ClientKeyPEM != "" && o.ClientCertPEM == "" {
		bad("client_cert_pem", "required with client_key_pem")
	}
	if o.ServerName != "" && (hasControl(o.ServerName) || strings.ContainsAny(o.ServerName, " /")) {
		bad("server_name", strconv.Quote(o.ServerName)+" is not a host name")
	}
	if len(probs) > 0 {
		return t, probs
	}
	if t.MinVersion != 0 && t.MaxVersion != 0 && t.MinVersion > t.MaxVersion {
		return t, []tlsProblem{{"min_version", "min_version " + o.MinVersion + " is above max_version " + o.MaxVersion}}
	}
	if len(t.CAPEM) > 0 {
		if _, err := (measure.TLS{CAPEM: t.CAPEM}).Config(); err != nil {
			bad("ca_pem", clientMessage(err))
		}
	}
	if len(t.ClientCertPEM) > 0 {
		if _, err := (measure.TLS{ClientCertPEM: t.ClientCertPEM, ClientKeyPEM: t.ClientKeyPEM}).Config(); err != nil {
			bad("client_cert_pem", clientMessage(err))
		}
	}
	return t, probs
}

// pemBytes is s as bytes, nil when empty, as the engine's zero value.
func pemBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// clientMessage is a TLS option's error without the Go package prefix.
func clientMessage(err error) string {
	msg := err.Error()
	if errors.Is(err, measure.ErrInvalidTLS) {
		msg = strings.TrimPrefix(msg, measure.ErrInvalidTLS.Error()+": ")
	}
	return msg
}

// tlsFromPlan expresses an ab line's TLS flags (-f, -Z, --insecure,
// --sni) as options; nil when the line has none.
func tlsFromPlan(t measure.TLS) *TLSOptions {
	if t.IsZero() {
		return nil
	}
	o := &TLSOptions{InsecureSkipVerify: t.SkipVerify, ServerName: t.ServerName}
	if t.MinVersion != 0 {
		o.MinVersion = measure.TLSVersionName(t.MinVersion)
	}
	if t.MaxVersion != 0 {
		o.MaxVersion = measure.TLSVersionName(t.MaxVersion)
	}
	for _, id := range t.CipherSuites {
		o.CipherSuites = append(o.CipherSuites, cipherName(id))
	}
	return o
}

func cipherName(id uint16) string {
	for _, n := range measure.CipherSuiteNames() {
		if v, err := measure.ParseCipherSuite(n); err == nil && v == id {
			return n
		}
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// mergeTLS lays an ab line's TLS flags over the request's options: the
// line's own wins where it says something.
func mergeTLS(from *TLSOptions, line *TLSOptions) *TLSOptions {
	switch {
	case line == nil:
		return from
	case from == nil:
		return line
	}
	out := *from
	out.InsecureSkipVerify = out.InsecureSkipVerify || line.InsecureSkipVerify
	if line.MinVersion != "" {
		out.MinVersion = line.MinVersion
	}
	if line.MaxVersion != "" {
		out.MaxVersion = line.MaxVersion
	}
	if len(line.CipherSuites) > 0 {
		out.CipherSuites = line.CipherSuites
	}
	if line.ServerName != "" {
		out.ServerName = line.ServerName
	}
	return &out
}

// redacted hides the client key.
func (o *TLSOptions) redacted() *TLSOptions {
	if o == nil || o.ClientKeyPEM == "" && !strings.Contains(o.ClientCertPEM, "PRIVATE KEY") {
		return o
	}
	out := *o
	if out.ClientKeyPEM != "" {
		out.ClientKeyPEM = RedactedValue
	}
	if strings.Contains(out.ClientCertPEM, "PRIVATE KEY") {
		// A bundle with the key in it (ab -E's layout) is a secret whole.
		out.ClientCertPEM = RedactedValue
	}
	return &out
}
