package cihook_test

import (
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/cihook"
)

// BenchmarkVerifyGitHub is the cost a delivery pays per template with a
// GitHub trigger: one HMAC over a push body of about 7 KiB.
func BenchmarkVerifyGitHub(b *testing.B) {
	body := []byte(`{"ref":"refs/heads/main","commits":[` + strings.Repeat(`{"id":"9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4","message":"a commit message of some length"},`, 70) + `{}]}`)
	sig := cihook.GitHubSignature("other-secret-0123456789", body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if cihook.VerifyGitHub("gh-secret-0123456789", body, sig) {
			b.Fatal("verified with the wrong secret")
		}
	}
}
