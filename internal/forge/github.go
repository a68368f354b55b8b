package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v89/github"
)

// maxCommentPages bounds the listing that looks for a context's comment:
// 100 comments a page, so a request with more than a thousand comments
// gets a second one rather than a listing without end.
const maxCommentPages = 10

// sendGitHub makes m's requests with go-github over hc.
func (c *Client) sendGitHub(ctx context.Context, hc *http.Client, m Message, token string) (string, error) {
	base := c.github.String()
	gh, err := github.NewClient(github.WithHTTPClient(hc), github.WithAuthToken(token), github.WithURLs(&base, nil), github.WithUserAgent(userAgent))
	if err != nil {
		return "", fmt.Errorf("GitHub client: %w", err)
	}
	owner, repo, _ := strings.Cut(m.Repository, "/")
	switch {
	case m.Status != nil:
		s := m.Status
		st := github.RepoStatus{State: github.Ptr(string(s.State)), Context: github.Ptr(s.Context)}
		if s.Description != "" {
			st.Description = github.Ptr(s.Description)
		}
		if s.TargetURL != "" {
			st.TargetURL = github.Ptr(s.TargetURL)
		}
		if _, _, err := gh.Repositories.CreateStatus(ctx, owner, repo, m.SHA, st); err != nil {
			return "", err
		}
		return fmt.Sprintf("status %s (%s) set on %s", s.State, s.Context, short(m.SHA)), nil
	case m.Comment != nil:
		return githubComment(ctx, gh, owner, repo, m.Request, m.Comment)
	}
	return "", errors.New("the message is neither a status nor a comment")
}

// githubComment writes the context's comment on pull request number: it
// finds the comment by its marker and updates it (unless comment mode
// on_change finds its result unchanged), or creates it.
func githubComment(ctx context.Context, gh *github.Client, owner, repo string, number int, c *Comment) (string, error) {
	found, err := findGitHubComment(ctx, gh, owner, repo, number, c.Marker)
	if err != nil {
		return "", err
	}
	if found == nil {
		made, _, err := gh.Issues.CreateComment(ctx, owner, repo, number, &github.IssueComment{Body: github.Ptr(c.Body)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("comment %d created", made.GetID()), nil
	}
	if why := keep(c, found.GetBody()); why != "" {
		return fmt.Sprintf("comment %d left as it was: %s", found.GetID(), why), nil
	}
	if _, _, err := gh.Issues.EditComment(ctx, owner, repo, found.GetID(), &github.IssueComment{Body: github.Ptr(c.Body)}); err != nil {
		return "", err
	}
	return fmt.Sprintf("comment %d updated", found.GetID()), nil
}

// findGitHubComment is the oldest comment of the request that carries
// marker, nil when none does.
func findGitHubComment(ctx context.Context, gh *github.Client, owner, repo string, number int, marker string) (*github.IssueComment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for range maxCommentPages {
		list, resp, err := gh.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, err
		}
		for _, cm := range list {
			if strings.Contains(cm.GetBody(), marker) {
				return cm, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return nil, nil
}

// rateLimited reads go-github's rate limit errors: the primary limit's
// reset, the secondary limit's Retry-After (a minute when it gives none).
func rateLimited(err error, now time.Time) (time.Duration, bool) {
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return max(rl.Rate.Reset.Sub(now), time.Second), true
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) {
		if ab.RetryAfter != nil {
			return *ab.RetryAfter, true
		}
		return abuseWait, true
	}
	return 0, false
}
