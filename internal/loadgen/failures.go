package loadgen

import (
	"errors"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/valyala/fasthttp"
)

// TLSHandshakeError is a TLS handshake with the target that failed: the
// dialer wraps the handshake's error in it, so the failure is counted in its
// own class and a run aborts on it as ab does, whatever the cause looks like
// to the socket (an EOF, a reset, a record that is not TLS).
type TLSHandshakeError struct{ Err error }

func (e *TLSHandshakeError) Error() string { return "tls handshake: " + e.Err.Error() }
func (e *TLSHandshakeError) Unwrap() error { return e.Err }

// abortTLSPrefix starts Measurement.Aborted for a TLS handshake failure
// before any success, in ab's words, with OpenSSL's SSL_get_error code:
// 1 (SSL_ERROR_SSL) for a protocol error, 5 (SSL_ERROR_SYSCALL) when the
// socket failed or closed mid-handshake.
const abortTLSPrefix = "SSL handshake failed"

// tlsAbortMessage is Measurement.Aborted for the handshake error he.
func tlsAbortMessage(he *TLSHandshakeError) string {
	code := 1
	if isIOError(he.Err) {
		code = 5
	}
	return fmt.Sprintf("%s (%d): %v", abortTLSPrefix, code, he.Err)
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
