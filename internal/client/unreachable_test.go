package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUnreachableSaysWhy: a call that gets no answer says which server
// and why in a few words, not as Go's chain ("client: GET ...: Get
// \"...\": dial tcp ...: connect: connection refused"), and still
// unwraps to the transport's error.
func TestUnreachableSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	c, err := New(closed, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Job(t.Context(), "job_x")
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Job on a closed port = %v, want an *UnreachableError", err)
	}
	if want := "cannot reach the benchq server at " + closed + ": connection refused"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Errorf("error %v does not unwrap to the *net.OpError", err)
	}
}

func TestReason(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	_, timeout := http.DefaultClient.Do(req)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unknown host", &net.DNSError{Err: "no such host", Name: "lcalhost", IsNotFound: true}, `cannot resolve host "lcalhost"`},
		{"resolver down", &net.DNSError{Err: "server misbehaving", Name: "example.test"}, `cannot resolve host "example.test": server misbehaving`},
		{"deadline", timeout, "timed out"},
		{"canceled", context.Canceled, "interrupted"},
	}
	for _, tt := range tests {
		if got := Reason(tt.err); got != tt.want {
			t.Errorf("%s: Reason(%v) = %q, want %q", tt.name, tt.err, got, tt.want)
		}
		if strings.Contains(Reason(tt.err), `Get "`) {
			t.Errorf("%s: Reason keeps Go's URL prefix", tt.name)
		}
	}
}
