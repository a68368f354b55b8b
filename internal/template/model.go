package template

import (
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/benchq/benchq/internal/job"
)

// Template is a saved job spec and what runs it.
type Template struct {
	// Name is unique per owner: 1 to 64 letters, digits, '.', '_' or '-'.
	Name string `json:"name" example:"checkout-main"`
	// Owner is the API key id the template belongs to; its jobs are that
	// key's jobs.
	Owner string `json:"-"`
	// Spec is a job spec whose string values may hold placeholders in
	// double braces: commit, branch, target_url, pr, repo and the names
	// in Values (the OpenAPI document is a Go template, so the braces
	// are not written here).
	Spec job.Spec `json:"spec"`
	// Values declares the template's own placeholders, each with its
	// default ("" for none: then every run must give it); a built-in
	// placeholder may get a default too.
	Values map[string]string `json:"values,omitempty"`
	// Schedule, when set, runs the template on a clock (the scheduler's
	// business; stored here as given).
	Schedule *Schedule `json:"schedule,omitempty"`
	Triggers Triggers  `json:"triggers,omitzero"`
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Schedule runs a template on a cron expression. The scheduler validates
// and interprets it; the template store keeps it as given.
type Schedule struct {
	Cron     string       `json:"cron" example:"*/15 * * * *"`
	Timezone string       `json:"timezone,omitempty" example:"Europe/Berlin"`
	Jitter   job.Duration `json:"jitter,omitempty" swaggertype:"string" example:"30s"`
	Paused   bool         `json:"paused,omitempty"`
	// Missed says what to do with runs missed while no scheduler ran.
	Missed string `json:"missed,omitempty" example:"skip"`
}

// Triggers are the CI webhooks that run a template.
type Triggers struct {
	GitHub *GitHubTrigger `json:"github,omitempty"`
	GitLab *GitLabTrigger `json:"gitlab,omitempty"`
}

// GitHubTrigger runs the template on GitHub push and pull_request events
// of Repository, signed with Secret (X-Hub-Signature-256).
type GitHubTrigger struct {
	// Repository is the full name, "owner/repo".
	Repository string `json:"repository" example:"acme/shop"`
	// Branches limits the runs to these branches (path.Match patterns,
	// "release/*"); empty means every branch. For a pull request the
	// branch is its head branch.
	Branches []string `json:"branches,omitempty"`
	// Secret is the webhook's secret as configured on GitHub; never shown
	// back.
	Secret string `json:"secret,omitempty"`
	// APIToken is what the statuses and comments of the template's jobs
	// (their notify.github) are sent with, instead of the service's
	// BENCHQ_GITHUB_TOKEN: a token that may write commit statuses and
	// pull request comments of Repository. Never shown back.
	APIToken string `json:"api_token,omitempty"`
}

// GitLabTrigger runs the template on GitLab Push Hook and Merge Request
// Hook events of Project, carrying Token (X-Gitlab-Token).
type GitLabTrigger struct {
	// Project is the path with namespace, "group/project".
	Project  string   `json:"project" example:"acme/shop"`
	Branches []string `json:"branches,omitempty"`
	// Token is the webhook's secret token as configured on GitLab; never
	// shown back.
	Token string `json:"token,omitempty"`
	// APIToken is GitHubTrigger's APIToken for GitLab (instead of
	// BENCHQ_GITLAB_TOKEN): a token with the api scope on Project. Never
	// shown back.
	APIToken string `json:"api_token,omitempty"`
}

// Redacted is how the API shows a template: its trigger secrets as
// job.RedactedValue and its spec redacted as a job's is.
func (t Template) Redacted() Template {
	t.Spec = t.Spec.Redacted()
	if g := t.Triggers.GitHub; g != nil {
		c := *g
		c.Secret, c.APIToken = redact(c.Secret), redact(c.APIToken)
		t.Triggers.GitHub = &c
	}
	if g := t.Triggers.GitLab; g != nil {
		c := *g
		c.Token, c.APIToken = redact(c.Token), redact(c.APIToken)
		t.Triggers.GitLab = &c
	}
	return t
}

// redact is how a secret is shown: RedactedValue, or "" when there is
// none.
func redact(secret string) string {
	if secret == "" {
		return ""
	}
	return job.RedactedValue
}

// APIToken is the template's own token for forge (job.ForgeGitHub or
// job.ForgeGitLab), "" when it keeps none.
func (t *Template) APIToken(forge string) string {
	switch {
	case forge == job.ForgeGitHub && t.Triggers.GitHub != nil:
		return t.Triggers.GitHub.APIToken
	case forge == job.ForgeGitLab && t.Triggers.GitLab != nil:
		return t.Triggers.GitLab.APIToken
	}
	return ""
}

// matchBranch reports whether branch is one of patterns (path.Match);
// no patterns match every branch.
func matchBranch(patterns []string, branch string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, err := matchPattern(p, branch); err == nil && ok {
			return true
		}
	}
	return false
}

// Matches reports whether the GitHub trigger runs on a push or pull
// request of repository on branch. Repository names compare without case,
// as GitHub's do.
func (g *GitHubTrigger) Matches(repository, branch string) bool {
	return g != nil && equalFold(g.Repository, repository) && matchBranch(g.Branches, branch)
}

// Matches reports whether the GitLab trigger runs on project's branch.
func (g *GitLabTrigger) Matches(project, branch string) bool {
	return g != nil && equalFold(g.Project, project) && matchBranch(g.Branches, branch)
}

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }

func matchPattern(p, branch string) (bool, error) { return path.Match(p, branch) }

func isControl(r rune) bool { return unicode.IsControl(r) }
