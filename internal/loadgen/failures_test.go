package loadgen

import (
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
		{errors.New("tls: first record does not look like a TLS handshake"),
			"SSL handshake failed (1): tls: first record does not look like a TLS handshake"},
		{io.EOF, "SSL handshake failed (5): EOF"},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
			"SSL handshake failed (5): read tcp: connection reset by peer"},
	}
	for _, tt := range tests {
		he := &TLSHandshakeError{Err: tt.err}
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
