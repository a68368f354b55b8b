package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/secrettest"
)

// TestForgeTokens: the service's forge tokens come from the environment
// only, and however a Config is printed, logged or encoded, they do not
// show.
func TestForgeTokens(t *testing.T) {
	gh, gl := secrettest.Random(t, "ghp_"), secrettest.Random(t, "glpat-")
	env := map[string]string{"BENCHQ_GITHUB_TOKEN": gh + "\n", "BENCHQ_GITLAB_TOKEN": gl, "BENCHQ_GITHUB_API_URL": "https://ghe.example/api/v3"}
	getenv := func(k string) string { return env[k] }
	cfg, err := Load([]string{"worker", "--redis-url=redis://127.0.0.1:1"}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GitHubToken.Reveal() != gh || cfg.GitLabToken.Reveal() != gl || cfg.GitHubAPIURL != "https://ghe.example/api/v3" || cfg.GitLabAPIURL != DefaultGitLabAPIURL {
		t.Errorf("Load = tokens %d and %d bytes, URLs %q %q; want the environment's", len(cfg.GitHubToken), len(cfg.GitLabToken), cfg.GitHubAPIURL, cfg.GitLabAPIURL)
	}
	var shown bytes.Buffer
	fmt.Fprintf(&shown, "%v %+v %#v %s %q\n", cfg, cfg, cfg, cfg.GitHubToken, cfg.GitLabToken)
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shown.Write(b)
	slog.New(slog.NewTextHandler(&shown, nil)).Info("config", "cfg", cfg, "token", cfg.GitHubToken)
	slog.New(slog.NewJSONHandler(&shown, nil)).Info("config", "cfg", cfg, "token", cfg.GitLabToken)
	Usage(&shown, CommandWorker)
	Usage(&shown, CommandAll)
	if leaks := secrettest.Leaks(shown.String(), gh, gl); len(leaks) > 0 {
		t.Errorf("a token shows in what a Config prints:\n%s", shown.String())
	}
	if !strings.Contains(shown.String(), "[redacted]") || !strings.Contains(shown.String(), "BENCHQ_GITHUB_TOKEN") {
		t.Errorf("printed config lacks [redacted], or the help lacks BENCHQ_GITHUB_TOKEN:\n%s", shown.String())
	}
	// No flag carries a token, and serve (which sends nothing) reads none.
	if _, err := Load([]string{"worker", "--redis-url=redis://127.0.0.1:1", "--github-token", gh}, getenv); !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), gh) {
		t.Errorf("Load(--github-token) = %v, want an unknown flag not naming the token", err)
	}
	if cfg, err := Load([]string{"serve", "--redis-url=redis://127.0.0.1:1"}, getenv); err != nil || cfg.GitHubToken != "" {
		t.Errorf("serve read the token (%d bytes), err %v", len(cfg.GitHubToken), err)
	}
	if _, err := Load([]string{"worker", "--redis-url=redis://127.0.0.1:1", "--github-api-url", "api.github.com"}, getenv); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "github-api-url") {
		t.Errorf("Load(relative github-api-url) = %v, want invalid naming github-api-url", err)
	}
}
