package job

import (
	"regexp"
	"strings"
)

// Notify says where a job reports back to: a commit status on the
// measured commit (pending when the job starts; success, failure or
// error when it ends) and, for a pull or merge request, one comment with
// the job's result table, which later jobs of the same request and
// context update in place. A spec holds no token: the service's
// (BENCHQ_GITHUB_TOKEN, BENCHQ_GITLAB_TOKEN) or the api_token of the
// trigger of the job's template is used, so no read of a job can show one.
type Notify struct {
	GitHub *GitHubNotify `json:"github,omitempty"`
	GitLab *GitLabNotify `json:"gitlab,omitempty"`
}

// GitHubNotify is a commit status and a pull request comment on GitHub
// (or GitHub Enterprise, at the service's BENCHQ_GITHUB_API_URL).
type GitHubNotify struct {
	// Repository is the full name, "owner/name".
	Repository string `json:"repository" example:"acme/shop"`
	// SHA is the commit's full id.
	SHA string `json:"sha" example:"9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"`
	// PR is the pull request's number; set, the job's result table goes
	// into one comment of it.
	PR int `json:"pr,omitempty" minimum:"1" example:"12"`
	// Comment says when that comment is written: always (the default),
	// on_change (only when the verdict, a failing threshold or a
	// significant change differs from what it shows) or never.
	Comment CommentMode `json:"comment,omitempty" swaggertype:"string" enums:"always,on_change,never" example:"always"`
	// Context names the status and the comment; default "benchq/" and the
	// job's template, else its name.
	Context string `json:"context,omitempty" example:"benchq/checkout-main"`
}

// GitLabNotify is GitHubNotify for GitLab (at BENCHQ_GITLAB_API_URL): a
// commit status (its name is the context) and a merge request note.
type GitLabNotify struct {
	// Project is the path with namespace, "group/project".
	Project      string      `json:"project" example:"acme/shop"`
	SHA          string      `json:"sha" example:"9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"`
	MergeRequest int         `json:"merge_request,omitempty" minimum:"1" example:"7"`
	Comment      CommentMode `json:"comment,omitempty" swaggertype:"string" enums:"always,on_change,never" example:"on_change"`
	Context      string      `json:"context,omitempty" example:"benchq/checkout-main"`
}

// CommentMode is when a pull request comment is written.
type CommentMode string

// The comment modes; "" is CommentAlways.
const (
	CommentAlways   CommentMode = "always"
	CommentOnChange CommentMode = "on_change"
	CommentNever    CommentMode = "never"
)

// The forges a job can notify, as Notify's fields name them.
const (
	ForgeGitHub = "github"
	ForgeGitLab = "gitlab"
)

// NotifyTarget is one forge a job notifies, whichever it is.
type NotifyTarget struct {
	Forge      string // ForgeGitHub or ForgeGitLab
	Repository string // GitHub's full name or GitLab's project path
	SHA        string
	// Request is the pull request number or merge request iid, 0 for none.
	Request int
	Comment CommentMode
	Context string
}

// Targets lists the forges n notifies, GitHub first.
func (n *Notify) Targets() []NotifyTarget {
	if n == nil {
		return nil
	}
	var out []NotifyTarget
	if g := n.GitHub; g != nil {
		out = append(out, NotifyTarget{Forge: ForgeGitHub, Repository: g.Repository, SHA: g.SHA, Request: g.PR, Comment: g.Comment, Context: g.Context})
	}
	if g := n.GitLab; g != nil {
		out = append(out, NotifyTarget{Forge: ForgeGitLab, Repository: g.Project, SHA: g.SHA, Request: g.MergeRequest, Comment: g.Comment, Context: g.Context})
	}
	return out
}

// Commented reports whether t writes a comment: it names a request and
// its mode is not never.
func (t NotifyTarget) Commented() bool { return t.Request > 0 && t.Comment != CommentNever }

// NotifyContext is the context a status and a comment of job spec s are
// named by: given, else "benchq/" and its template label, else its name,
// else "benchq/job".
func (s Spec) NotifyContext(given string) string {
	if given != "" {
		return given
	}
	name := s.Labels[LabelTemplate]
	if name == "" {
		name = s.Name
	}
	if name == "" || !contextRe.MatchString("benchq/"+name) {
		name = "job"
	}
	return "benchq/" + name
}

// Over is n with what the trigger event knows (repository, commit,
// request) put over the template's own notify, whose comment mode and
// context stay: a template says how it reports, the event says where.
func (n *Notify) Over(template *Notify) *Notify {
	if n == nil {
		return template
	}
	out := Notify{}
	if template != nil {
		out = *template
	}
	if g := n.GitHub; g != nil {
		c := *g
		if t := out.GitHub; t != nil {
			c.Comment, c.Context = pick(g.Comment, t.Comment), pickString(g.Context, t.Context)
		}
		out.GitHub = &c
	}
	if g := n.GitLab; g != nil {
		c := *g
		if t := out.GitLab; t != nil {
			c.Comment, c.Context = pick(g.Comment, t.Comment), pickString(g.Context, t.Context)
		}
		out.GitLab = &c
	}
	return &out
}

func pick(a, b CommentMode) CommentMode {
	if a != "" {
		return a
	}
	return b
}

func pickString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var (
	// githubRepoRe is a GitHub full name: owner and name, no more.
	githubRepoRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	// gitlabProjectRe is a GitLab path: a namespace of one or more groups.
	gitlabProjectRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$`)
	// shaRe is a full commit id, SHA-1 or SHA-256.
	shaRe = regexp.MustCompile(`^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$`)
	// contextRe keeps a context readable and out of the HTML comment that
	// marks the pull request comment (no '<', '>').
	contextRe = regexp.MustCompile(`^[A-Za-z0-9 ._/:@()+-]{1,100}$`)
)

// maxRepositoryLen bounds a repository or project path.
const maxRepositoryLen = 255

func (v *validator) notify(n *Notify) {
	if n == nil {
		return
	}
	if n.GitHub == nil && n.GitLab == nil {
		v.add("notify", "name the forge to notify: github or gitlab")
		return
	}
	if g := n.GitHub; g != nil {
		v.repository("notify.github.repository", g.Repository, githubRepoRe, `"owner/name"`)
		v.notifyCommon("notify.github", g.SHA, "pr", g.PR, g.Comment, g.Context)
	}
	if g := n.GitLab; g != nil {
		v.repository("notify.gitlab.project", g.Project, gitlabProjectRe, `"group/project"`)
		v.notifyCommon("notify.gitlab", g.SHA, "merge_request", g.MergeRequest, g.Comment, g.Context)
	}
}

// repository checks a repository path: its shape, and no "." or ".."
// segment, which would move the forge API's URL built from it.
func (v *validator) repository(field, repo string, re *regexp.Regexp, want string) {
	ok := re.MatchString(repo) && len(repo) <= maxRepositoryLen
	for seg := range strings.SplitSeq(repo, "/") {
		ok = ok && seg != "." && seg != ".."
	}
	if !ok {
		v.add(field, "want the repository's full path, %s", want)
	}
}

func (v *validator) notifyCommon(at, sha, requestField string, request int, mode CommentMode, context string) {
	if !shaRe.MatchString(sha) {
		v.add(at+".sha", "want the commit's full id: 40 (or 64) hexadecimal digits")
	}
	if request < 0 {
		v.add(at+"."+requestField, "%d is not a request number: want 1 or more, or leave it out", request)
	}
	switch mode {
	case "", CommentAlways, CommentOnChange, CommentNever:
	default:
		v.add(at+".comment", "%q is not a comment mode: want always, on_change or never", string(mode))
	}
	if context != "" && !contextRe.MatchString(context) {
		v.add(at+".context", "want 1 to 100 letters, digits, blanks or . _ / : @ ( ) + -")
	}
}
