// Package secrettest makes secrets for tests and finds them in what the
// code under test printed or logged: an API key, a webhook secret or a
// Redis password must never show, whole or in part.
package secrettest

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
)

// Random is prefix and 32 random hex digits.
func Random(t testing.TB, prefix string) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// Leaks reports which of secrets text shows, in whole or any 8 characters
// of it in a row.
func Leaks(text string, secrets ...string) []string {
	var shown []string
	for _, s := range secrets {
		for i := 0; i+8 <= len(s); i++ {
			if strings.Contains(text, s[i:i+8]) {
				shown = append(shown, s)
				break
			}
		}
	}
	return shown
}
