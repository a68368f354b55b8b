package loadgen

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/valyala/fasthttp"
)

// TLSHandshakeError is a TLS handshake with the target that failed: the
// dialer wraps the handshake's error in it, so the failure is counted in its
// own class and a run aborts on it as ab does, whatever the cause looks like
// to the socket (an EOF, a reset, a record that is not TLS). A TLS 1.3
// server that refuses the client's certificate says so only after the
// client's handshake is done, with an alert on the first read: that is a
// handshake failure too.
type TLSHandshakeError struct {
	Err    error
	Reason measure.TLSReason
}

func newHandshakeError(err error) *TLSHandshakeError {
	return &TLSHandshakeError{Err: err, Reason: handshakeReason(err)}
}

func (e *TLSHandshakeError) Error() string { return "tls handshake: " + e.Err.Error() }
func (e *TLSHandshakeError) Unwrap() error { return e.Err }

// detail is the reason as the abort message names it.
func (e *TLSHandshakeError) detail() string {
	var rh tls.RecordHeaderError
	if errors.As(e.Err, &rh) && bytes.HasPrefix(rh.RecordHeader[:], []byte("HTTP/")) {
		return "not TLS: the server answered plain HTTP"
	}
	return e.Reason.String()
}

// handshakeReason tells why a handshake failed from crypto/tls's error:
// verification errors by type, a record that is not TLS by its header,
// and the server's alerts, which crypto/tls reports only as text
// ("remote error: tls: bad certificate"), by the alert's name.
func handshakeReason(err error) measure.TLSReason {
	var (
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		rh  tls.RecordHeaderError
		op  *net.OpError
		msg = err.Error()
	)
	switch {
	case errors.As(err, &ua):
		return measure.TLSUnknownAuthority
	case errors.As(err, &he), errors.As(err, &ci):
		return measure.TLSBadCertificate
	case errors.As(err, &rh):
		return measure.TLSNotTLS
	case errors.As(err, &op) && op.Op == "remote error":
		return alertReason(op.Err.Error())
	case strings.Contains(msg, "protocol version"), strings.Contains(msg, "no supported versions"):
		return measure.TLSProtocolVersion
	case strings.Contains(msg, "no cipher suite supported"), strings.Contains(msg, "server chose an unconfigured cipher suite"):
		return measure.TLSHandshakeFailure
	}
	return measure.TLSOther
}

// alertReason maps the text of a TLS alert the server sent.
func alertReason(alert string) measure.TLSReason {
	switch strings.TrimPrefix(alert, "tls: ") {
	case "bad certificate", "certificate required", "unknown certificate authority",
		"unsupported certificate", "certificate revoked", "certificate expired", "access denied":
		return measure.TLSClientCertificate
	case "protocol version not supported":
		return measure.TLSProtocolVersion
	case "handshake failure", "insufficient security":
		return measure.TLSHandshakeFailure
	}
	return measure.TLSOther
}

// isRemoteAlert reports whether err is a TLS alert the server sent, other
// than the close_notify of an orderly close.
func isRemoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && !strings.Contains(op.Err.Error(), "close notify")
}

// abortTLSPrefix starts Measurement.Aborted for a TLS handshake failure
// before any success, in ab's words, with OpenSSL's SSL_get_error code:
// 1 (SSL_ERROR_SSL) for a protocol error, 5 (SSL_ERROR_SYSCALL) when the
// socket failed or closed mid-handshake; then the reason and Go's error.
const abortTLSPrefix = "SSL handshake failed"

// tlsAbortMessage is Measurement.Aborted for the handshake error he.
func tlsAbortMessage(he *TLSHandshakeError) string {
	code := 1
	if isIOError(he.Err) && !isRemoteAlert(he.Err) {
		code = 5
	}
	return fmt.Sprintf("%s (%d): %s: %v", abortTLSPrefix, code, he.detail(), he.Err)
}

// stage is where in a request an error happened.
type stage int

const (
	stageDial stage = iota
	stageWrite
	stageRead
)

// class is the failure class of one failed request.
type class int

const (
	classConnect class = iota
	classReceive
	classException
	classWrite // counted as a write error and as an exception
	classTimeout
	classPortExhaustion
	classTLSHandshake
	classBodyTooLarge
	classHeaderTooLarge
	classStreamReset
	classGoAway
	classFlowControl
	classProtocol
)

// classify maps an error at a stage to ab's failure classes. For reads, err
// is the raw error of the connection when there was one (fasthttp hides it).
func classify(st stage, err error) class {
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return classBodyTooLarge
	case errors.Is(err, ErrHeaderTooLarge):
		return classHeaderTooLarge
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return classPortExhaustion
	case isTimeout(err):
		return classTimeout
	}
	var he *TLSHandshakeError
	switch st {
	case stageDial:
		if errors.As(err, &he) {
			return classTLSHandshake
		}
		return classConnect
	case stageWrite:
		return classWrite
	}
	if isIOError(err) {
		return classReceive
	}
	// The bytes arrived but were not an HTTP response fasthttp could read.
	return classException
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, fasthttp.ErrTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isIOError(err error) bool {
	var op *net.OpError
	var errno syscall.Errno
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &op) || errors.As(err, &errno)
}

// isStaleConn reports whether a reused keep-alive connection failed the way
// one the server closed while idle does; ab retries such a request silently.
func isStaleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// countFailure counts one failed request of class c in f.
func countFailure(f *measure.Failures, c class) {
	switch c {
	case classConnect:
		f.Connect++
	case classReceive:
		f.Receive++
	case classException, classWrite:
		f.Exceptions++
	case classTimeout:
		f.Timeout++
	case classPortExhaustion:
		f.PortExhaustion++
	case classTLSHandshake:
		f.TLSHandshake++
	case classBodyTooLarge:
		f.BodyTooLarge++
	case classHeaderTooLarge:
		f.HeaderTooLarge++
	case classStreamReset:
		f.StreamReset++
	case classGoAway:
		f.GoAway++
	case classFlowControl:
		f.FlowControl++
	case classProtocol:
		f.Protocol++
	}
}
