package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
)

// UnreachableError is a call that got no answer: the server could not be
// reached, or the connection broke before it answered. Its text is for
// the person who typed the server's URL, not a Go error chain.
type UnreachableError struct {
	Server string // the base URL called
	Err    error  // what the transport returned
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the benchq server at %s: %s", e.Server, Reason(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Reason says in a few words why an HTTP exchange got no answer:
// "connection refused", `cannot resolve host "lcalhost"`, "timed out",
// "the connection was closed before an answer"; the transport's own text,
// without the "Get \"URL\": " Go puts before it, when it is none of these.
func Reason(err error) string {
	var dns *net.DNSError
	var errno syscall.Errno
	var timeout interface{ Timeout() bool }
	var ue *url.Error
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("cannot resolve host %q", dns.Name)
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot resolve host %q: %s", dns.Name, dns.Err)
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return "timed out"
	case errors.As(err, &errno):
		return errno.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	case errors.As(err, &ue):
		return ue.Err.Error()
	}
	return err.Error()
}
