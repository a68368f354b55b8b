package apikey

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// KeyFinder looks a key up by the hash of its plaintext. It returns an
// error wrapping ErrUnknown when no key has that hash; the store
// implements it.
type KeyFinder interface {
	KeyByHash(ctx context.Context, hash string) (Key, error)
}

// Authenticate returns the key whose plaintext is plain. It fails with
// ErrUnknown for a malformed or unknown key and ErrRevoked for a revoked
// one; any other error is the finder's (Redis down) and is not the
// caller's fault.
//
// The lookup is by hash, so the stored index never sees the plaintext; the
// record found is compared once more in constant time, so a corrupted or
// colliding index entry cannot admit the wrong caller.
func Authenticate(ctx context.Context, f KeyFinder, plain string) (Key, error) {
	if !strings.HasPrefix(plain, Prefix) {
		return Key{}, ErrUnknown // not ours: no need to ask Redis
	}
	k, err := f.KeyByHash(ctx, Hash(plain))
	if errors.Is(err, ErrUnknown) {
		return Key{}, ErrUnknown
	}
	if err != nil {
		return Key{}, fmt.Errorf("apikey: authenticate: %w", err)
	}
	if !k.Matches(plain) {
		return Key{}, ErrUnknown
	}
	if k.Revoked() {
		return Key{}, ErrRevoked
	}
	return k, nil
}
