package loadgen

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/valyala/fasthttp"
)

// Total is the number of failed requests: the sum of every class.
func (f Failures) Total() int64 {
	return f.Connect + f.Receive + f.Length + f.Exceptions + f.Timeout + f.PortExhaustion
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
)

// classify maps an error at a stage to ab's failure classes. For reads, err
// is the raw error of the connection when there was one (fasthttp hides it).
func classify(st stage, err error) class {
	switch {
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return classPortExhaustion
	case isTimeout(err):
		return classTimeout
	}
	switch st {
	case stageDial:
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
	}
}

func (f *Failures) merge(o Failures) {
	f.Connect += o.Connect
	f.Receive += o.Receive
	f.Length += o.Length
	f.Exceptions += o.Exceptions
	f.Timeout += o.Timeout
	f.PortExhaustion += o.PortExhaustion
}
