package testservers

import (
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"
)

func TestHostileBehaviours(t *testing.T) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, MaxResponseHeaderBytes: 1 << 20}}
	tests := []struct {
		b     Behaviour
		check func(t *testing.T, resp *http.Response, err error)
	}{
		{HugeBody(3 << 20), func(t *testing.T, resp *http.Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err != nil || n != 3<<20 {
				t.Errorf("body = %d bytes, %v; want %d", n, err, 3<<20)
			}
		}},
		{EndlessChunked(), func(t *testing.T, resp *http.Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.CopyN(io.Discard, resp.Body, 8<<20)
			if err != nil || n != 8<<20 {
				t.Errorf("read %d bytes, %v; want an endless body", n, err)
			}
		}},
		{GarbageStatus(), func(t *testing.T, _ *http.Response, err error) {
			if err == nil {
				t.Error("a garbage status line was accepted")
			}
		}},
		{ResetOnAccept(), func(t *testing.T, _ *http.Response, err error) {
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
				t.Errorf("err = %v, want a reset connection", err)
			}
		}},
		{HeaderFlood(), func(t *testing.T, _ *http.Response, err error) {
			if err == nil {
				t.Error("an endless header was accepted")
			}
		}},
		{ShortBody(1000, 10), func(t *testing.T, resp *http.Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if n != 10 || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("body = %d bytes, %v; want 10 and an unexpected EOF", n, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.b.String(), func(t *testing.T) {
			h := StartHostile(t, tt.b)
			resp, err := client.Get(h.URL)
			if resp != nil {
				defer resp.Body.Close()
			}
			tt.check(t, resp, err)
			if h.Accepted() != 1 {
				t.Errorf("accepted %d connections, want 1", h.Accepted())
			}
		})
	}
}
