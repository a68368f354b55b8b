package cihook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is what an event asks for.
type Kind string

const (
	// Run: a push to a branch, or a pull/merge request opened, reopened or
	// updated with new commits: measure Commit.
	Run Kind = "run"
	// Ping: GitHub checking the hook; answered, nothing runs.
	Ping Kind = "ping"
	// Ignore: an event or action that runs nothing (a tag push, a branch
	// deleted, a pull request closed, an event not subscribed to).
	Ignore Kind = "ignore"
)

// ErrMalformed is returned for a verified body that is not the event its
// header says.
var ErrMalformed = errors.New("cihook: malformed event payload")

// Event is one CI event, whatever sent it.
type Event struct {
	Kind Kind
	// Why says why an event is ignored, for the answer to the CI system.
	Why string
	// Repository is GitHub's full name or GitLab's path with namespace.
	Repository string
	// Branch is the branch a trigger's branches are matched against: the
	// pushed branch, or the branch a pull/merge request merges into, as
	// GitHub Actions' pull_request filters do.
	Branch string
	// HeadBranch is the branch whose commit is measured: the pushed one,
	// or the request's source branch.
	HeadBranch string
	Commit     string
	// PR is the pull request number (GitLab: the merge request iid), ""
	// for a push.
	PR string
}

// Labels are the labels a job started by e carries.
func (e Event) Labels() map[string]string {
	l := map[string]string{"repo": e.Repository, "branch": e.HeadBranch, "commit": e.Commit}
	if e.PR != "" {
		l["pr"] = e.PR
	}
	return l
}

// zeroSHA is the "after" of a push that deleted its branch.
const zeroSHA = "0000000000000000000000000000000000000000"

func ignore(format string, args ...any) Event {
	return Event{Kind: Ignore, Why: fmt.Sprintf(format, args...)}
}

// branchOf is the branch a ref names, "" for a tag or another ref.
func branchOf(ref string) string {
	b, _ := strings.CutPrefix(ref, "refs/heads/")
	if b == ref {
		return ""
	}
	return b
}

func decode(body []byte, v any) error {
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	msg := "the delivery's body is not the JSON of its event"
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		msg = fmt.Sprintf("the delivery's body is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
	case errors.As(err, &te):
		msg = fmt.Sprintf("the delivery's %s is %s, want %s", te.Field, article(te.Value), te.Type)
	}
	return &PayloadError{Message: msg, cause: fmt.Errorf("%w: %w", ErrMalformed, err)}
}

// PayloadError is a delivery refused for its body. Message is written
// for the client, who configured the hook; ErrMalformed is in the chain.
type PayloadError struct {
	Message string
	cause   error
}

func (e *PayloadError) Error() string { return e.cause.Error() }

// Unwrap returns the cause.
func (e *PayloadError) Unwrap() error { return e.cause }

// article is a JSON kind as encoding/json names it ("string", "number"),
// with its article.
func article(kind string) string {
	if strings.HasPrefix(kind, "a") || strings.HasPrefix(kind, "o") {
		return "an " + kind
	}
	return "a " + kind
}

// ParseGitHub reads a verified GitHub delivery of event (X-GitHub-Event).
func ParseGitHub(event string, body []byte) (Event, error) {
	switch event {
	case "ping":
		return Event{Kind: Ping}, nil
	case "push":
		var p struct {
			Ref        string `json:"ref"`
			After      string `json:"after"`
			Deleted    bool   `json:"deleted"`
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		return push(p.Repository.FullName, p.Ref, p.After, p.Deleted)
	case "pull_request":
		var p struct {
			Action      string `json:"action"`
			Number      int    `json:"number"`
			PullRequest struct {
				Head struct {
					SHA string `json:"sha"`
					Ref string `json:"ref"`
				} `json:"head"`
				Base struct {
					Ref string `json:"ref"`
				} `json:"base"`
			} `json:"pull_request"`
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		switch p.Action {
		case "opened", "synchronize", "reopened":
		default:
			return ignore("pull_request action %q runs nothing", p.Action), nil
		}
		pr := p.PullRequest
		return request(p.Repository.FullName, pr.Base.Ref, pr.Head.Ref, pr.Head.SHA, p.Number)
	}
	return ignore("event %q runs nothing: send push and pull_request", event), nil
}

// ParseGitLab reads a verified GitLab delivery of event (X-Gitlab-Event).
func ParseGitLab(event string, body []byte) (Event, error) {
	switch event {
	case "Push Hook":
		var p struct {
			Ref     string `json:"ref"`
			After   string `json:"after"`
			Project struct {
				PathWithNamespace string `json:"path_with_namespace"`
			} `json:"project"`
		}
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		return push(p.Project.PathWithNamespace, p.Ref, p.After, false)
	case "Merge Request Hook":
		var p struct {
			Project struct {
				PathWithNamespace string `json:"path_with_namespace"`
			} `json:"project"`
			Attrs struct {
				IID          int    `json:"iid"`
				Action       string `json:"action"`
				SourceBranch string `json:"source_branch"`
				TargetBranch string `json:"target_branch"`
				OldRev       string `json:"oldrev"`
				LastCommit   struct {
					ID string `json:"id"`
				} `json:"last_commit"`
			} `json:"object_attributes"`
		}
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		a := p.Attrs
		switch {
		case a.Action == "open" || a.Action == "reopen":
		case a.Action == "update" && a.OldRev != "":
			// An update with oldrev brought new commits; one without
			// changed the title, labels or the like.
		default:
			return ignore("merge request action %q runs nothing", a.Action), nil
		}
		return request(p.Project.PathWithNamespace, a.TargetBranch, a.SourceBranch, a.LastCommit.ID, a.IID)
	}
	return ignore("event %q runs nothing: send Push Hook and Merge Request Hook", event), nil
}

func push(repo, ref, after string, deleted bool) (Event, error) {
	if repo == "" {
		return Event{}, &PayloadError{Message: "the delivery names no repository", cause: fmt.Errorf("%w: no repository", ErrMalformed)}
	}
	branch := branchOf(ref)
	switch {
	case branch == "":
		return ignore("ref %q is not a branch", ref), nil
	case deleted || after == zeroSHA || after == "":
		return ignore("branch %q was deleted", branch), nil
	}
	return Event{Kind: Run, Repository: repo, Branch: branch, HeadBranch: branch, Commit: after}, nil
}

func request(repo, base, head, sha string, number int) (Event, error) {
	if repo == "" || base == "" || head == "" || sha == "" || number <= 0 {
		const why = "a pull request needs repository, base and head branch, head commit and number"
		return Event{}, &PayloadError{Message: "the delivery's " + why, cause: fmt.Errorf("%w: %s", ErrMalformed, why)}
	}
	return Event{Kind: Run, Repository: repo, Branch: base, HeadBranch: head, Commit: sha, PR: strconv.Itoa(number)}, nil
}

// GitHubRepository is the repository a GitHub delivery names
// (repository.full_name), read from a body not verified yet: it only
// picks the templates whose secrets may verify it. "" when it names none
// (an organization's ping, a body that is not JSON).
func GitHubRepository(body []byte) string {
	var p struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Repository.FullName
}

// GitLabProject is GitHubRepository for GitLab: project.path_with_namespace.
func GitLabProject(body []byte) string {
	var p struct {
		Project struct {
			PathWithNamespace string `json:"path_with_namespace"`
		} `json:"project"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Project.PathWithNamespace
}
