package loadgen

import (
	"errors"
	"fmt"
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

// Total is the number of failed requests: the sum of every class.
func (f Failures) Total() int64 {
	return f.Connect + f.Receive + f.Length + f.Exceptions + f.Timeout + f.PortExhaustion + f.TLSHandshake +
		f.BodyTooLarge + f.HeaderTooLarge
}

// Hints gives one line of advice per non-zero failure class, in the order of
// the fields, for a report to print under its failure counts.
func (f Failures) Hints() []string {
	var hints []string
	add := func(n int64, hint string) {
		if n > 0 {
			hints = append(hints, hint)
		}
	}
	add(f.Connect, "connect: the target refused or dropped new connections; check that it listens and its backlog (somaxconn)")
	add(f.Receive, "receive: connections were closed or reset mid-response; check the target's logs and limits")
	add(f.Length, "length: response bodies differ in length from the first one; use -l if the document is dynamic")
	add(f.Exceptions, "exceptions: requests could not be written or responses were not valid HTTP")
	add(f.Timeout, "timeout: requests took longer than the timeout (-s); raise it or lower the load")
	add(f.PortExhaustion, "port exhaustion: no local port left for a new connection; use keep-alive (-k) or widen net.ipv4.ip_local_port_range")
	add(f.TLSHandshake, "tls handshake: the TLS handshake failed; the port may not speak TLS (use http://) or accept none of Go's TLS versions and ciphers")
	add(f.BodyTooLarge, "body too large: response bodies exceeded the body size cap and were cut; raise it (--max-body, request.max_body) if they are meant to be that long")
	add(f.HeaderTooLarge, "header too large: response headers exceeded 8 KiB, ab's limit too; check the target's headers and cookies")
	return hints
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

// add counts one failed request of class c.
func (f *Failures) add(c class) {
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
	}
}

func (f *Failures) merge(o Failures) {
	f.Connect += o.Connect
	f.Receive += o.Receive
	f.Length += o.Length
	f.Exceptions += o.Exceptions
	f.Timeout += o.Timeout
	f.PortExhaustion += o.PortExhaustion
	f.TLSHandshake += o.TLSHandshake
	f.BodyTooLarge += o.BodyTooLarge
	f.HeaderTooLarge += o.HeaderTooLarge
}
