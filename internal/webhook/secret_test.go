package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b {
		t.Fatalf("NewSecret twice = %q both times", a)
	}
	raw, ok := strings.CutPrefix(a, SecretPrefix)
	if !ok {
		t.Fatalf("NewSecret() = %q, want the %q prefix", a, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) != 32 {
		t.Errorf("NewSecret() key = %d bytes, %v; want 32 bytes of base64", len(key), err)
	}
}

func TestNewSignerRefusesBadSecrets(t *testing.T) {
	for _, s := range []string{
		"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!",
		"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16)), // too short
	} {
		if _, err := NewSigner(s); !errors.Is(err, ErrBadSecret) {
			t.Errorf("NewSigner(%q) = %v, want ErrBadSecret", s, err)
		}
	}
}

// TestSignKnownVector checks the signature the Standard Webhooks
// specification publishes for its example message.
func TestSignKnownVector(t *testing.T) {
	s, err := NewSigner("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	if got != want {
		t.Errorf("Sign(spec example) = %q, want %q", got, want)
	}
}

// TestSignVerifiedByStandardWebhooks verifies our signatures with the
// specification's own Go library, not with our signer.
func TestSignVerifiedByStandardWebhooks(t *testing.T) {
	secret := NewSecret()
	s, err := NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"job.succeeded","data":{"job_id":"x"}}`)
	headers := func(id string, ts time.Time, b []byte) http.Header {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		h.Set("webhook-signature", s.Sign(id, ts, b))
		return h
	}
	now := time.Now()
	tests := []struct {
		name    string
		h       http.Header
		body    []byte
		wantErr error
	}{
		{"genuine", headers("msg_1", now, body), body, nil},
		{"tampered body", headers("msg_1", now, body), []byte(`{"type":"job.succeeded","data":{"job_id":"y"}}`), standardwebhooks.ErrNoMatchingSignature},
		{"other id", func() http.Header { h := headers("msg_1", now, body); h.Set("webhook-id", "msg_2"); return h }(), body, standardwebhooks.ErrNoMatchingSignature},
		{"six minutes old", headers("msg_1", now.Add(-6*time.Minute), body), body, standardwebhooks.ErrMessageTooOld},
		{"six minutes ahead", headers("msg_1", now.Add(6*time.Minute), body), body, standardwebhooks.ErrMessageTooNew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wh.Verify(tt.body, tt.h)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Verify = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestMessageID(t *testing.T) {
	tests := []struct {
		job, event, want string
	}{
		{"01JC3W9Q5V1ZK2M4N6P8R0T2V4", "job.succeeded", "msg_01JC3W9Q5V1ZK2M4N6P8R0T2V4_job.succeeded"},
		{"01JC3W9Q5V1ZK2M4N6P8R0T2V4", "job.started", "msg_01JC3W9Q5V1ZK2M4N6P8R0T2V4_job.started"},
		{"01JC3W9Q5V1ZK2M4N6P8R0T2V5", "job.succeeded", "msg_01JC3W9Q5V1ZK2M4N6P8R0T2V5_job.succeeded"},
	}
	for _, tt := range tests {
		if got := MessageID(tt.job, tt.event); got != tt.want {
			t.Errorf("MessageID(%q, %q) = %q, want %q", tt.job, tt.event, got, tt.want)
		}
	}
}
