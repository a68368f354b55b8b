package cihook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// GitHubSignature is the X-Hub-Signature-256 value GitHub sends for body
// signed with secret: "sha256=" and the hex HMAC-SHA256.
func GitHubSignature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifyGitHub reports whether header, an X-Hub-Signature-256 value,
// signs body with secret. The comparison takes the same time wherever
// the two differ.
func VerifyGitHub(secret string, body []byte, header string) bool {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || secret == "" {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// VerifyGitLab reports whether header, an X-Gitlab-Token value, is token.
// Both are hashed first, so the comparison takes the same time whatever
// their lengths.
func VerifyGitLab(token, header string) bool {
	if token == "" || header == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(header))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
