package abcmd

import (
	"fmt"
	"strings"

	"github.com/benchq/benchq/internal/measure"
)

// openSSLSuites maps OpenSSL's names of the TLS 1.0-1.2 cipher suites Go
// implements to Go's. OpenSSL's other names (DHE, PSK, SRP, CAMELLIA, ARIA
// suites) and its keywords (HIGH, !aNULL, @STRENGTH) have no Go
// counterpart: ParseCiphers refuses them rather than offer another list.
var openSSLSuites = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"ECDHE-ECDSA-AES128-SHA256":     "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-RSA-AES128-SHA256":       "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-RSA-DES-CBC3-SHA":        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
	"ECDHE-ECDSA-RC4-SHA":           "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
	"ECDHE-RSA-RC4-SHA":             "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
	"AES128-SHA256":                 "TLS_RSA_WITH_AES_128_CBC_SHA256",
	"DES-CBC3-SHA":                  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
	"RC4-SHA":                       "TLS_RSA_WITH_RC4_128_SHA",
}

// ParseCiphers reads ab's -Z value, an OpenSSL cipher list: names
// separated by ':' (or ',' or spaces, as OpenSSL allows), each an OpenSSL
// name from openSSLSuites or a Go name (measure.ParseCipherSuite). As
// with OpenSSL's list, TLS 1.3 suites are not chosen by it.
func ParseCiphers(list string) ([]uint16, error) {
	var ids []uint16
	for _, name := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		if gn, ok := openSSLSuites[strings.ToUpper(name)]; ok {
			name = gn
		}
		id, err := measure.ParseCipherSuite(name)
		if err != nil {
			return nil, fmt.Errorf("cipher %q: not a suite Go's TLS offers (OpenSSL keywords and DHE, PSK, CAMELLIA or ARIA suites have no Go counterpart): %w", name, err)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: empty cipher list", measure.ErrInvalidTLS)
	}
	return ids, nil
}

// ParseProtocol reads ab's -f value: TLS1, TLS1.1, TLS1.2 or TLS1.3 allow
// that version alone, as ab does; ALL allows every version Go speaks (1.0
// to 1.3). SSL2 and SSL3 are refused.
func ParseProtocol(v string) (minV, maxV uint16, err error) {
	if strings.EqualFold(v, "ALL") {
		return 0x0301, 0x0304, nil
	}
	ver, err := measure.ParseTLSVersion(v)
	if err != nil {
		return 0, 0, err
	}
	return ver, ver, nil
}

// applyTLS applies -f and -Z.
func (p *abParser) applyTLS(c byte, v string) error {
	t := &p.a.Plan.TLS
	switch c {
	case 'f':
		lo, hi, err := ParseProtocol(v)
		if err != nil {
			return inputErr(fmt.Sprintf("Invalid -f %q: want TLS1, TLS1.1, TLS1.2, TLS1.3 or ALL (%v)", v, err))
		}
		t.MinVersion, t.MaxVersion, p.a.Protocol = lo, hi, v
	case 'Z':
		ids, err := ParseCiphers(v)
		if err != nil {
			return inputErr(fmt.Sprintf("Invalid -Z %q: %v", v, err))
		}
		t.CipherSuites, p.a.Ciphers = ids, v
	}
	return nil
}

// TrustAsAB applies ab's default to a command line run on the user's own
// machine: no certificate is verified, unless --cacert or --verify asked
// for it. A job's ab line does not get it: the service verifies unless the
// line says --insecure.
func (a *AB) TrustAsAB() {
	if !a.Verify && a.CAFile == "" {
		a.Plan.TLS.SkipVerify = true
	}
}

// SetClientCert makes pem (ab -E's file: certificate and key in one PEM
// file) the client certificate of every handshake.
func (a *AB) SetClientCert(pem []byte) { a.Plan.TLS.ClientCertPEM = pem }

// SetCA makes pem (--cacert's file) the only roots trusted.
func (a *AB) SetCA(pem []byte) { a.Plan.TLS.CAPEM = pem }
