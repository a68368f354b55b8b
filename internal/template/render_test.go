package template_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/template"
)

func tmpl(targets ...job.Target) template.Template {
	return template.Template{
		Name:   "t",
		Values: map[string]string{"path": "/default"},
		Spec: job.Spec{
			Labels:  map[string]string{"sha": "{{commit}}"},
			Targets: targets,
		},
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name     string
		target   job.Target
		values   map[string]string
		wantURL  string // the rendered target URL (or ab line)
		wantHost string // the host the URL reaches
		field    string // the field a refusal names; "" for success
	}{
		{"whole URL from a value", job.Target{URL: "{{target_url}}"},
			map[string]string{"target_url": "http://127.0.0.1:8080/x", "commit": "abc"}, "http://127.0.0.1:8080/x", "127.0.0.1:8080", ""},
		{"declared default", job.Target{URL: "http://127.0.0.1:8080{{path}}"},
			map[string]string{"commit": "abc"}, "http://127.0.0.1:8080%2Fdefault", "", ""},
		{"a value in a path cannot change the host", job.Target{URL: "http://127.0.0.1:8080/b/{{branch}}"},
			map[string]string{"branch": "x@evil.example/#?", "commit": "abc"}, "http://127.0.0.1:8080/b/x%40evil.example%2F%23%3F", "127.0.0.1:8080", ""},
		{"a value in a host stays in the host", job.Target{URL: "http://{{branch}}.127.0.0.1.nip.io/"},
			map[string]string{"branch": "a@evil.example:80/", "commit": "abc"}, "http://a%40evil.example%3A80%2F.127.0.0.1.nip.io/", "", ""},
		{"a value cannot add words to an ab line", job.Target{AB: "ab -n 10 {{target_url}}"},
			map[string]string{"target_url": "http://127.0.0.1/ -p /etc/passwd", "commit": "abc"}, "", "", "values.target_url"},
		{"a value cannot be a flag", job.Target{AB: "ab -n 10 {{target_url}}"},
			map[string]string{"target_url": "-p", "commit": "abc"}, "", "", "values.target_url"},
		{"a URL's start", job.Target{URL: "{{target_url}}/b/{{branch}}"},
			map[string]string{"target_url": "http://127.0.0.1:8080", "branch": "a/../../x?y", "commit": "abc"}, "http://127.0.0.1:8080/b/a%2F..%2F..%2Fx%3Fy", "127.0.0.1:8080", ""},
		{"a whole ab word", job.Target{AB: "ab -n 10 {{target_url}}"},
			map[string]string{"target_url": "http://127.0.0.1:9/", "commit": "abc"}, "ab -n 10 http://127.0.0.1:9/", "", ""},
		{"missing value", job.Target{URL: "{{target_url}}"},
			map[string]string{"commit": "abc"}, "", "", "spec.targets[0].url"},
		{"undeclared value", job.Target{URL: "http://127.0.0.1/"},
			map[string]string{"commit": "abc", "nope": "1"}, "", "", "values.nope"},
		{"unknown placeholder", job.Target{URL: "http://127.0.0.1/{{nope}}"},
			map[string]string{"commit": "abc"}, "", "", "spec.targets[0].url"},
		{"control characters", job.Target{URL: "{{target_url}}"},
			map[string]string{"target_url": "http://127.0.0.1/\r\nX: y", "commit": "abc"}, "", "", "values.target_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.target.Name = "a"
			spec, err := tmpl(tt.target).Render(tt.values)
			if tt.field != "" {
				var ve *errcode.Error
				if !errors.As(err, &ve) {
					t.Fatalf("Render = %v, want a validation error naming %s", err, tt.field)
				}
				if !hasField(ve, tt.field) {
					t.Fatalf("Render = %v, want a problem naming %s", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render = %v", err)
			}
			got := spec.Targets[0].URL + spec.Targets[0].AB
			if got != tt.wantURL {
				t.Errorf("rendered target = %q, want %q", got, tt.wantURL)
			}
			if spec.Labels["sha"] != tt.values["commit"] {
				t.Errorf("label sha = %q, want %q", spec.Labels["sha"], tt.values["commit"])
			}
			if u, err := url.Parse(got); err == nil && strings.Contains(u.Hostname(), "evil") && !strings.Contains(u.Hostname(), "%") {
				t.Errorf("the value reached another host: %q", got)
			}
			if tt.wantHost != "" {
				u, err := url.Parse(got)
				if err != nil || u.Host != tt.wantHost {
					t.Errorf("host of %q = %v (%v), want %s", got, u, err, tt.wantHost)
				}
			}
		})
	}
}

func hasField(ve *errcode.Error, field string) bool {
	for _, p := range ve.Problems {
		if p.Field == field {
			return true
		}
	}
	return false
}

func TestValidate(t *testing.T) {
	good := func() template.Template {
		return template.Template{
			Name:   "ok",
			Values: map[string]string{"path": "/"},
			Spec:   job.Spec{Targets: []job.Target{{URL: "{{target_url}}{{path}}"}}},
			Triggers: template.Triggers{
				GitHub: &template.GitHubTrigger{Repository: "acme/shop", Branches: []string{"main", "release/*"}, Secret: strings.Repeat("s", 16)},
				GitLab: &template.GitLabTrigger{Project: "group/sub/shop", Token: strings.Repeat("t", 20)},
			},
		}
	}
	tests := []struct {
		name   string
		change func(*template.Template)
		field  string
	}{
		{"valid", func(*template.Template) {}, ""},
		{"bad name", func(t *template.Template) { t.Name = "a/b" }, "name"},
		{"builtin with a default", func(t *template.Template) { t.Values["target_url"] = "http://127.0.0.1/" }, ""},
		{"bad value name", func(t *template.Template) { t.Values["9x"] = "" }, "values.9x"},
		{"unknown placeholder", func(t *template.Template) { t.Spec.Name = "{{what}}" }, "spec.name"},
		{"malformed placeholder", func(t *template.Template) { t.Spec.Name = "{{ not closed" }, "spec.name"},
		{"no targets", func(t *template.Template) { t.Spec.Targets = nil }, "spec.targets"},
		{"short secret", func(t *template.Template) { t.Triggers.GitHub.Secret = "short" }, "triggers.github.secret"},
		{"no token", func(t *template.Template) { t.Triggers.GitLab.Token = "" }, "triggers.gitlab.token"},
		{"bad repository", func(t *template.Template) { t.Triggers.GitHub.Repository = "shop" }, "triggers.github.repository"},
		{"bad branch pattern", func(t *template.Template) { t.Triggers.GitHub.Branches = []string{"[x"} }, "triggers.github.branches[0]"},
		{"api token", func(t *template.Template) { t.Triggers.GitHub.APIToken = "ghp_0123456789abcdef" }, ""},
		{"api token with a blank", func(t *template.Template) { t.Triggers.GitHub.APIToken = "ghp_0123 456789" }, "triggers.github.api_token"},
		{"api token with a newline", func(t *template.Template) { t.Triggers.GitLab.APIToken = "glpat-0123\n" }, "triggers.gitlab.api_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := good()
			tt.change(&tp)
			err := tp.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ve *errcode.Error
			if !errors.As(err, &ve) || !hasField(ve, tt.field) {
				t.Fatalf("Validate = %v, want a problem naming %s", err, tt.field)
			}
			if strings.Contains(err.Error(), "ssssssssssssssss") || strings.Contains(err.Error(), "short") && tt.name == "short secret" || strings.Contains(err.Error(), "0123") {
				t.Errorf("Validate repeats the secret: %v", err)
			}
		})
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	tp := template.Template{Triggers: template.Triggers{
		GitHub: &template.GitHubTrigger{Repository: "a/b", Secret: "gh-secret-0123456789", APIToken: "ghp_api-token-0123"},
		GitLab: &template.GitLabTrigger{Project: "a/b", Token: "gl-token-0123456789"},
	}}
	r := tp.Redacted()
	if r.Triggers.GitHub.Secret != job.RedactedValue || r.Triggers.GitLab.Token != job.RedactedValue ||
		r.Triggers.GitHub.APIToken != job.RedactedValue || r.Triggers.GitLab.APIToken != "" {
		t.Errorf("Redacted = %+v %+v, want each secret redacted, the unset one left empty", r.Triggers.GitHub, r.Triggers.GitLab)
	}
	if tp.Triggers.GitHub.Secret != "gh-secret-0123456789" || tp.APIToken(job.ForgeGitHub) != "ghp_api-token-0123" || tp.APIToken(job.ForgeGitLab) != "" {
		t.Error("Redacted changed the original, or APIToken does not read it")
	}
}

func TestTriggerMatches(t *testing.T) {
	g := &template.GitHubTrigger{Repository: "Acme/Shop", Branches: []string{"main", "release/*"}}
	tests := []struct {
		repo, branch string
		want         bool
	}{
		{"acme/shop", "main", true},
		{"acme/shop", "release/1.2", true},
		{"acme/shop", "feature", false},
		{"acme/other", "main", false},
	}
	for _, tt := range tests {
		if got := g.Matches(tt.repo, tt.branch); got != tt.want {
			t.Errorf("Matches(%s, %s) = %v, want %v", tt.repo, tt.branch, got, tt.want)
		}
	}
}

// TestRenderSuggestsThePlaceholderMeant: a run's value for a name the
// template does not declare, near one it does, is taken for a typo.
func TestRenderSuggestsThePlaceholderMeant(t *testing.T) {
	tests := []struct{ name, want string }{
		{"brnach", "the template declares no placeholder {{brnach}}; did you mean {{branch}}?"},
		{"pth", "the template declares no placeholder {{pth}}; did you mean {{path}}?"},
		{"nope", "the template declares no placeholder {{nope}} (built in: commit, branch, target_url, pr, repo; declare others in values)"},
	}
	for _, tt := range tests {
		_, err := tmpl(job.Target{URL: "http://127.0.0.1/"}).Render(map[string]string{"commit": "abc", tt.name: "x"})
		ce, ok := errcode.As(err)
		if !ok || len(ce.Problems) != 1 || ce.Problems[0].Message != tt.want {
			t.Errorf("Render(values.%s) = %v, want the one problem %q", tt.name, err, tt.want)
		}
	}
}
