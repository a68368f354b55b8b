package cihook_test

import (
	"testing"

	"github.com/benchq/benchq/internal/cihook"
)

// GitHub's documented test vector ("Validating webhook deliveries").
const (
	ghSecret  = "It's a Secret to Everybody"
	ghPayload = "Hello, World!"
	ghSig     = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func TestGitHubSignatureVector(t *testing.T) {
	if got := cihook.GitHubSignature(ghSecret, []byte(ghPayload)); got != ghSig {
		t.Fatalf("GitHubSignature = %s, want %s", got, ghSig)
	}
}

func TestVerifyGitHub(t *testing.T) {
	tests := []struct {
		name, secret, body, header string
		want                       bool
	}{
		{"documented vector", ghSecret, ghPayload, ghSig, true},
		{"other secret", "It's a Secret to Nobody", ghPayload, ghSig, false},
		{"other body", ghSecret, "Hello, World?", ghSig, false},
		{"sha1 header", ghSecret, ghPayload, "sha1=" + ghSig[7:], false},
		{"no prefix", ghSecret, ghPayload, ghSig[7:], false},
		{"not hex", ghSecret, ghPayload, "sha256=zz", false},
		{"truncated", ghSecret, ghPayload, ghSig[:len(ghSig)-2], false},
		{"empty secret", "", ghPayload, cihook.GitHubSignature("", []byte(ghPayload)), false},
	}
	for _, tt := range tests {
		if got := cihook.VerifyGitHub(tt.secret, []byte(tt.body), tt.header); got != tt.want {
			t.Errorf("%s: VerifyGitHub = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestVerifyGitLab(t *testing.T) {
	tests := []struct {
		token, header string
		want          bool
	}{
		{"gl-token-0123456789", "gl-token-0123456789", true},
		{"gl-token-0123456789", "gl-token-012345678", false},
		{"gl-token-0123456789", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := cihook.VerifyGitLab(tt.token, tt.header); got != tt.want {
			t.Errorf("VerifyGitLab(%q, %q) = %v, want %v", tt.token, tt.header, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name, provider, event, body string
		want                        cihook.Event
		err                         bool
	}{
		{"github push", "github", "push", `{"ref":"refs/heads/main","after":"` + sha + `","repository":{"full_name":"acme/shop"}}`,
			cihook.Event{Kind: cihook.Run, Repository: "acme/shop", Branch: "main", HeadBranch: "main", Commit: sha}, false},
		{"github branch deleted", "github", "push", `{"ref":"refs/heads/main","after":"0000000000000000000000000000000000000000","deleted":true,"repository":{"full_name":"acme/shop"}}`,
			cihook.Event{Kind: cihook.Ignore}, false},
		{"github tag", "github", "push", `{"ref":"refs/tags/v1","after":"` + sha + `","repository":{"full_name":"acme/shop"}}`,
			cihook.Event{Kind: cihook.Ignore}, false},
		{"github pr", "github", "pull_request", `{"action":"synchronize","number":7,"pull_request":{"head":{"sha":"` + sha + `","ref":"feat"},"base":{"ref":"main"}},"repository":{"full_name":"acme/shop"}}`,
			cihook.Event{Kind: cihook.Run, Repository: "acme/shop", Branch: "main", HeadBranch: "feat", Commit: sha, PR: "7"}, false},
		{"github pr closed", "github", "pull_request", `{"action":"closed","number":7,"pull_request":{},"repository":{"full_name":"acme/shop"}}`,
			cihook.Event{Kind: cihook.Ignore}, false},
		{"github ping", "github", "ping", `{"zen":"x"}`, cihook.Event{Kind: cihook.Ping}, false},
		{"github other", "github", "issues", `{}`, cihook.Event{Kind: cihook.Ignore}, false},
		{"github malformed", "github", "push", `[1]`, cihook.Event{}, true},
		{"gitlab push", "gitlab", "Push Hook", `{"ref":"refs/heads/main","after":"` + sha + `","project":{"path_with_namespace":"acme/shop"}}`,
			cihook.Event{Kind: cihook.Run, Repository: "acme/shop", Branch: "main", HeadBranch: "main", Commit: sha}, false},
		{"gitlab mr", "gitlab", "Merge Request Hook", `{"project":{"path_with_namespace":"acme/shop"},"object_attributes":{"iid":3,"action":"update","oldrev":"ab","source_branch":"feat","target_branch":"main","last_commit":{"id":"` + sha + `"}}}`,
			cihook.Event{Kind: cihook.Run, Repository: "acme/shop", Branch: "main", HeadBranch: "feat", Commit: sha, PR: "3"}, false},
		{"gitlab mr title edit", "gitlab", "Merge Request Hook", `{"project":{"path_with_namespace":"acme/shop"},"object_attributes":{"iid":3,"action":"update","source_branch":"feat","target_branch":"main","last_commit":{"id":"` + sha + `"}}}`,
			cihook.Event{Kind: cihook.Ignore}, false},
	}
	for _, tt := range tests {
		parse := cihook.ParseGitHub
		if tt.provider == "gitlab" {
			parse = cihook.ParseGitLab
		}
		got, err := parse(tt.event, []byte(tt.body))
		if (err != nil) != tt.err {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.err)
			continue
		}
		got.Why = ""
		if got != tt.want {
			t.Errorf("%s: = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestRepositoryOfUnverifiedBody: the repository is read from any body,
// and a body naming none (or no JSON) names "".
func TestRepositoryOfUnverifiedBody(t *testing.T) {
	tests := []struct {
		body           string
		github, gitlab string
	}{
		{`{"ref":"refs/heads/main","repository":{"full_name":"Acme/Shop"}}`, "Acme/Shop", ""},
		{`{"object_kind":"push","project":{"path_with_namespace":"group/sub/proj"}}`, "", "group/sub/proj"},
		{`{"zen":"ping of an organization hook","organization":{"login":"acme"}}`, "", ""},
		{`not json {"repository":{"full_name":"a/b"}}`, "", ""},
		{``, "", ""},
	}
	for _, tt := range tests {
		if got := cihook.GitHubRepository([]byte(tt.body)); got != tt.github {
			t.Errorf("GitHubRepository(%s) = %q, want %q", tt.body, got, tt.github)
		}
		if got := cihook.GitLabProject([]byte(tt.body)); got != tt.gitlab {
			t.Errorf("GitLabProject(%s) = %q, want %q", tt.body, got, tt.gitlab)
		}
	}
}
