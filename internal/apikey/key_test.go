package apikey

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestNew(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	k, plain, err := New("ci", true, Quota{MaxRuns: 5}, "", now)
	if err != nil {
		t.Fatal(err)
	}
	secret, ok := strings.CutPrefix(plain, Prefix)
	raw, derr := base64.RawURLEncoding.DecodeString(secret)
	if !ok || derr != nil || len(raw) != 32 {
		t.Errorf("plaintext %q: want bq_ + base64url of 32 bytes", plain)
	}
	if !regexp.MustCompile(`^key_[0-9a-f]{12}$`).MatchString(k.ID) {
		t.Errorf("ID = %q, want key_ + 12 hex digits", k.ID)
	}
	sum := sha256.Sum256([]byte(plain))
	if k.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("Hash = %q, want hex SHA-256 of the plaintext", k.Hash)
	}
	if strings.Contains(k.Hash, secret) || k.Name != "ci" || !k.Admin || k.Quota.MaxRuns != 5 || !k.CreatedAt.Equal(now) || k.CreatedAt.Location() != time.UTC {
		t.Errorf("New = %+v, want the given fields, created at %v UTC", k, now)
	}
	k2, plain2, _ := New("ci", false, Quota{}, "", now)
	if plain2 == plain || k2.ID == k.ID {
		t.Errorf("two keys share a plaintext or id")
	}
	if !k.Matches(plain) || k.Matches(plain2) || k.Matches("") {
		t.Errorf("Matches: want true only for the key's own plaintext")
	}
}

func TestCheckWebhookSecret(t *testing.T) {
	tests := []struct {
		secret string
		ok     bool
	}{
		{"", true},
		{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true},
		{"whsec_", false},
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", false},
		{"whsec_not base64!", false},
	}
	for _, tt := range tests {
		err := CheckWebhookSecret(tt.secret)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrBadWebhookSecret) {
			t.Errorf("CheckWebhookSecret(%q) = %v, want ok %t", tt.secret, err, tt.ok)
		}
	}
	if _, _, err := New("x", false, Quota{}, "whsec_", time.Now()); !errors.Is(err, ErrBadWebhookSecret) {
		t.Errorf("New with a bad webhook secret = %v, want ErrBadWebhookSecret", err)
	}
}

// finder is a KeyFinder over a map, counting its lookups.
type finder struct {
	keys  map[string]Key
	err   error
	calls int
}

func (f *finder) KeyByHash(_ context.Context, hash string) (Key, error) {
	f.calls++
	if f.err != nil {
		return Key{}, f.err
	}
	k, ok := f.keys[hash]
	if !ok {
		return Key{}, ErrUnknown
	}
	return k, nil
}

func TestAuthenticate(t *testing.T) {
	good, goodPlain, _ := New("good", false, Quota{}, "", time.Now())
	revoked, revokedPlain, _ := New("revoked", false, Quota{}, "", time.Now())
	now := time.Now()
	revoked.RevokedAt = &now
	other, otherPlain, _ := New("other", false, Quota{}, "", time.Now())
	f := &finder{keys: map[string]Key{
		good.Hash:    good,
		revoked.Hash: revoked,
		// A corrupted index: other's hash points at good's record. The
		// constant-time comparison of the record must refuse it.
		other.Hash: good,
	}}
	tests := []struct {
		name  string
		plain string
		want  error
		id    string
	}{
		{"valid", goodPlain, nil, good.ID},
		{"revoked", revokedPlain, ErrRevoked, ""},
		{"unknown", Prefix + "AAAA", ErrUnknown, ""},
		{"record of another key", otherPlain, ErrUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Authenticate(t.Context(), f, tt.plain)
			if !errors.Is(err, tt.want) || err == nil && k.ID != tt.id || tt.want == nil && err != nil {
				t.Errorf("Authenticate = %s, %v, want %s, %v", k.ID, err, tt.id, tt.want)
			}
		})
	}

	f.calls = 0
	if _, err := Authenticate(t.Context(), f, "ghp_somebodyelsestoken"); !errors.Is(err, ErrUnknown) || f.calls != 0 {
		t.Errorf("Authenticate(foreign token) = %v after %d lookups, want ErrUnknown without a lookup", err, f.calls)
	}
	down := &finder{err: errors.New("connection refused")}
	if _, err := Authenticate(t.Context(), down, goodPlain); err == nil || errors.Is(err, ErrUnknown) || errors.Is(err, ErrRevoked) {
		t.Errorf("Authenticate with the store down = %v, want a store error, not a verdict on the key", err)
	}
}
