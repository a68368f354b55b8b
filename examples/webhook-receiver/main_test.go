package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func newSecret(t *testing.T) string {
	t.Helper()
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// syncBuffer is the receiver's output, read by the test after the server
// goroutine wrote it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReceiver signs deliveries with the library's signer and sends them
// to the receiver on a loopback server.
func TestReceiver(t *testing.T) {
	secret := newSecret(t)
	var out syncBuffer
	rc, err := newReceiver(secret, &out)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	const payload = `{"type":"job.succeeded","timestamp":"2025-01-01T00:00:00Z","data":{"job_id":"job_1","status":"succeeded","verdict":"pass"}}`

	signer, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := standardwebhooks.NewWebhook(newSecret(t))
	tests := []struct {
		name   string
		method string
		signer *standardwebhooks.Webhook
		signed string // the body the signature covers
		sent   string // the body sent
		at     time.Time
		want   int
	}{
		{"valid", http.MethodPost, signer, payload, payload, time.Now(), http.StatusNoContent},
		{"tampered body", http.MethodPost, signer, payload, strings.Replace(payload, `"pass"`, `"fail"`, 1), time.Now(), http.StatusUnauthorized},
		{"other secret", http.MethodPost, other, payload, payload, time.Now(), http.StatusUnauthorized},
		{"timestamp 10 min old", http.MethodPost, signer, payload, payload, time.Now().Add(-10 * time.Minute), http.StatusUnauthorized},
		{"unsigned", http.MethodPost, nil, "", payload, time.Now(), http.StatusUnauthorized},
		{"GET", http.MethodGet, signer, "", "", time.Now(), http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL, strings.NewReader(tt.sent))
			if err != nil {
				t.Fatal(err)
			}
			if tt.signer != nil {
				sig, err := tt.signer.Sign("msg_1", tt.at, []byte(tt.signed))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("webhook-id", "msg_1")
				req.Header.Set("webhook-timestamp", strconv.FormatInt(tt.at.Unix(), 10))
				req.Header.Set("webhook-signature", sig)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s delivery = %d, want %d", tt.name, resp.StatusCode, tt.want)
			}
		})
	}
	// Only the valid delivery is printed.
	if got, want := out.String(), "job.succeeded job job_1 status succeeded verdict pass (webhook-id msg_1)\n"; got != want {
		t.Errorf("receiver printed %q, want %q", got, want)
	}
}

func TestNewReceiverNeedsSecret(t *testing.T) {
	for _, s := range []string{"", "whsec_not base64!"} {
		if _, err := newReceiver(s, nil); err == nil {
			t.Errorf("newReceiver(%q) = nil error, want one", s)
		}
	}
}
