package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrUnknown: no key has the presented value (or it is malformed).
	ErrUnknown = errors.New("apikey: unknown key")
	// ErrRevoked: the key existed but was revoked.
	ErrRevoked = errors.New("apikey: key revoked")
	// ErrBadWebhookSecret: a webhook secret that is not "whsec_<base64>".
	ErrBadWebhookSecret = errors.New("apikey: webhook secret must be whsec_ followed by base64")
)

const (
	// Prefix marks a benchq key, so secret scanners and humans can tell
	// one apart from other tokens.
	Prefix = "bq_"
	// secretBytes of crypto/rand entropy make guessing hopeless, which is
	// why one unsalted SHA-256 is enough to store a key.
	secretBytes = 32
	// idPrefix marks the public id of a key (safe to log and show).
	idPrefix = "key_"
	idBytes  = 6
	// webhookSecretPrefix is the Standard Webhooks secret prefix.
	webhookSecretPrefix = "whsec_"
)

// Key is the stored record of an API key. It never holds the plaintext.
type Key struct {
	// ID is public: it names the key in logs, listings and job owners.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Hash is the hex SHA-256 of the plaintext key.
	Hash  string `json:"hash"`
	Admin bool   `json:"admin,omitempty"`
	Quota Quota  `json:"quota"`
	// WebhookSecret, when set, signs the webhooks of the key's jobs.
	WebhookSecret string     `json:"webhook_secret,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	RevokedAt     *time.Time `json:"revoked_at,omitempty"`
}

// Revoked reports whether the key was revoked.
func (k Key) Revoked() bool { return k.RevokedAt != nil }

// New mints a key: the record to store and the plaintext, which exists
// only in the return value and must be shown to its owner exactly once.
func New(name string, admin bool, q Quota, webhookSecret string, now time.Time) (Key, string, error) {
	if err := CheckWebhookSecret(webhookSecret); err != nil {
		return Key{}, "", err
	}
	secret := make([]byte, secretBytes)
	id := make([]byte, idBytes)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, "", fmt.Errorf("apikey: random key: %w", err)
	}
	if _, err := rand.Read(id); err != nil {
		return Key{}, "", fmt.Errorf("apikey: random id: %w", err)
	}
	plain := Prefix + base64.RawURLEncoding.EncodeToString(secret)
	k := Key{
		ID:            idPrefix + hex.EncodeToString(id),
		Name:          name,
		Hash:          Hash(plain),
		Admin:         admin,
		Quota:         q,
		WebhookSecret: webhookSecret,
		CreatedAt:     now.UTC(),
	}
	return k, plain, nil
}

// Hash is the stored form of a plaintext key: hex SHA-256.
func Hash(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// Matches reports whether plain is this key, comparing hashes in constant
// time so the comparison leaks nothing about how much of a guess matched.
func (k Key) Matches(plain string) bool {
	return subtle.ConstantTimeCompare([]byte(Hash(plain)), []byte(k.Hash)) == 1
}

// CheckWebhookSecret accepts "" (none) or a Standard Webhooks secret.
func CheckWebhookSecret(s string) error {
	if s == "" {
		return nil
	}
	b64, ok := strings.CutPrefix(s, webhookSecretPrefix)
	if !ok || b64 == "" {
		return ErrBadWebhookSecret
	}
	if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
		return fmt.Errorf("%w: %v", ErrBadWebhookSecret, err)
	}
	return nil
}
