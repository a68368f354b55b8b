package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// gitlabState is a State in GitLab's words: a job under way is running,
// an error is a failure.
func gitlabState(s State) gitlab.BuildStateValue {
	switch s {
	case StatePending:
		return gitlab.Running
	case StateSuccess:
		return gitlab.Success
	}
	return gitlab.Failed
}

// sendGitLab makes m's requests with GitLab's client over hc. Its own
// retries are off: the delivery server retries, on its schedule, and logs
// each attempt.
func (c *Client) sendGitLab(ctx context.Context, hc *http.Client, m Message, token string) (string, error) {
	gl, err := gitlab.NewClient(token, gitlab.WithHTTPClient(hc), gitlab.WithBaseURL(c.gitlab.String()),
		gitlab.WithoutRetries(), gitlab.WithUserAgent(userAgent))
	if err != nil {
		return "", fmt.Errorf("GitLab client: %w", err)
	}
	switch {
	case m.Status != nil:
		s := m.Status
		opt := &gitlab.SetCommitStatusOptions{State: gitlabState(s.State), Name: gitlab.Ptr(s.Context)}
		if s.Description != "" {
			opt.Description = gitlab.Ptr(s.Description)
		}
		if s.TargetURL != "" {
			opt.TargetURL = gitlab.Ptr(s.TargetURL)
		}
		if _, _, err := gl.Commits.SetCommitStatus(m.Repository, m.SHA, opt, gitlab.WithContext(ctx)); err != nil {
			return "", err
		}
		return fmt.Sprintf("status %s (%s) set on %s", opt.State, s.Context, short(m.SHA)), nil
	case m.Comment != nil:
		return gitlabNote(ctx, gl, m.Repository, int64(m.Request), m.Comment)
	}
	return "", errors.New("the message is neither a status nor a comment")
}

// gitlabNote is githubComment for a merge request's notes.
func gitlabNote(ctx context.Context, gl *gitlab.Client, project string, mr int64, c *Comment) (string, error) {
	found, err := findGitLabNote(ctx, gl, project, mr, c.Marker)
	if err != nil {
		return "", err
	}
	if found == nil {
		made, _, err := gl.Notes.CreateMergeRequestNote(project, mr, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(c.Body)}, gitlab.WithContext(ctx))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("note %d created", made.ID), nil
	}
	if why := keep(c, found.Body); why != "" {
		return fmt.Sprintf("note %d left as it was: %s", found.ID, why), nil
	}
	if _, _, err := gl.Notes.UpdateMergeRequestNote(project, mr, found.ID, &gitlab.UpdateMergeRequestNoteOptions{Body: gitlab.Ptr(c.Body)}, gitlab.WithContext(ctx)); err != nil {
		return "", err
	}
	return fmt.Sprintf("note %d updated", found.ID), nil
}

// findGitLabNote is the oldest note of the merge request that carries
// marker, nil when none does.
func findGitLabNote(ctx context.Context, gl *gitlab.Client, project string, mr int64, marker string) (*gitlab.Note, error) {
	opt := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}, OrderBy: gitlab.Ptr("created_at"), Sort: gitlab.Ptr("asc")}
	for range maxCommentPages {
		list, resp, err := gl.Notes.ListMergeRequestNotes(project, mr, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		for _, n := range list {
			if strings.Contains(n.Body, marker) {
				return n, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return nil, nil
}
