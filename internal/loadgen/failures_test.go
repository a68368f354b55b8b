package loadgen

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestClassify(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	tests := []struct {
		st   stage
		err  error
		want class
	}{
		{stageDial, op(syscall.ECONNREFUSED), classConnect},
		{stageDial, op(syscall.EADDRNOTAVAIL), classPortExhaustion},
		{stageDial, os.ErrDeadlineExceeded, classTimeout},
		{stageDial, &TLSHandshakeError{Err: errors.New("tls: first record does not look like a TLS handshake")}, classTLSHandshake},
		{stageDial, fmt.Errorf("dial: %w", &TLSHandshakeError{Err: op(syscall.ECONNRESET)}), classTLSHandshake},
		{stageDial, &TLSHandshakeError{Err: os.ErrDeadlineExceeded}, classTimeout},
		{stageWrite, op(syscall.EPIPE), classWrite},
		{stageRead, op(syscall.ECONNRESET), classReceive},
		{stageRead, io.ErrUnexpectedEOF, classReceive},
		{stageRead, io.EOF, classReceive},
		{stageRead, fasthttp.ErrTimeout, classTimeout},
		{stageRead, op(os.ErrDeadlineExceeded), classTimeout},
		{stageRead, errors.New("cannot parse response status code"), classException},
		{stageRead, ErrBodyTooLarge, classBodyTooLarge},
		{stageRead, ErrHeaderTooLarge, classHeaderTooLarge},
		{stageRead, errBrokenChunk, classException},
	}
	for _, tt := range tests {
		if got := classify(tt.st, tt.err); got != tt.want {
			t.Errorf("classify(%d, %v) = %d, want %d", tt.st, tt.err, got, tt.want)
		}
	}
}

func TestTLSAbortMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{'H', 'T', 'T', 'P', '/'}},
			"SSL handshake failed (1): not TLS: the server answered plain HTTP: tls: first record does not look like a TLS handshake"},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{'S', 'S', 'H', '-', '2'}},
			"SSL handshake failed (1): not TLS: tls: first record does not look like a TLS handshake"},
		{io.EOF, "SSL handshake failed (5): other: EOF"},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
			"SSL handshake failed (5): other: read tcp: connection reset by peer"},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")},
			"SSL handshake failed (1): client certificate refused: remote error: tls: certificate required"},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")},
			"SSL handshake failed (1): protocol version: remote error: tls: protocol version not supported"},
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}},
			"SSL handshake failed (1): unknown authority: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		he := newHandshakeError(tt.err)
		if got := tlsAbortMessage(he); got != tt.want {
			t.Errorf("tlsAbortMessage(%v) = %q, want %q", tt.err, got, tt.want)
		}
		if got, want := he.Error(), "tls handshake: "+tt.err.Error(); got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
}

func TestServerSoftware(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Apache/2.4.41 (Ubuntu)", "Apache/2.4.41"},
		{"nginx/1.22.1", "nginx/1.22.1"},
		{"", ""},
		{"a\tb", "a"},
	} {
		if got := serverSoftware([]byte(tt.in)); got != tt.want {
			t.Errorf("serverSoftware(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
