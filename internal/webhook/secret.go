package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as Standard Webhooks writes them.
const SecretPrefix = "whsec_"

// secretBytes is the size of a generated key: 32 bytes is the HMAC-SHA256
// block-size-friendly choice the specification recommends (24 at least).
const secretBytes = 32

// ErrBadSecret is returned for a secret that is not "whsec_" + base64 of a
// key of at least 24 bytes.
var ErrBadSecret = errors.New("webhook: bad secret")

// NewSecret returns a fresh signing secret, "whsec_" + base64 of 32 random
// bytes.
func NewSecret() string {
	var key [secretBytes]byte
	_, _ = rand.Read(key[:]) // never fails: crypto/rand aborts rather than return short
	return SecretPrefix + base64.StdEncoding.EncodeToString(key[:])
}

// Signer signs messages with one secret.
type Signer struct{ key []byte }

// NewSigner parses secret ("whsec_<base64>").
func NewSigner(secret string) (*Signer, error) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: no %q prefix", ErrBadSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSecret, err)
	}
	if len(key) < 24 {
		return nil, fmt.Errorf("%w: key of %d bytes, want at least 24", ErrBadSecret, len(key))
	}
	return &Signer{key: key}, nil
}

// Sign returns the webhook-signature header value for message id sent at
// ts with body: "v1," + base64(HMAC-SHA256(key, id.unix-seconds.body)).
func (s *Signer) Sign(id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(nil, ts.Unix(), 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// MessageID returns the webhook-id of event for job jobID: "msg_" + job id
// + "_" + event. It is derived, not drawn, because a job sends each event
// at most once: whichever worker attempt, retry or redelivery sends it, the
// id is the same, so receivers can de-duplicate on it.
func MessageID(jobID, event string) string { return "msg_" + jobID + "_" + event }
