package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/cihook"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

// hookBodyLimit caps a CI webhook's body. GitHub sends up to 25 MB, but
// only for pushes of thousands of commits; a few MiB hold any push whose
// head is worth measuring, and the body is read whole before it is
// verified.
const hookBodyLimit = 4 << 20

// errBadSignature is every refused delivery: no template's secret signs
// it (or carries its token). The message never says which templates exist.
var errBadSignature = errors.New("api: webhook signature not valid")

// HookResponse answers a CI delivery: the jobs it started, or why none.
type HookResponse struct {
	Jobs []HookJob `json:"jobs,omitempty"`
	// Message says why nothing ran (a ping, a tag push, a deleted branch,
	// no template for the repository's branch).
	Message string `json:"message,omitempty" example:"branch \"feature\" of acme/shop triggers no template"`
}

// HookJob is one job a delivery started, or started before when the
// delivery is a replay.
type HookJob struct {
	Template string `json:"template" example:"checkout-main"`
	JobID    string `json:"job_id" example:"01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	Location string `json:"location" example:"/v1/jobs/01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	// Replayed: the delivery id was seen before; this job is the one
	// its first delivery created.
	Replayed bool `json:"replayed,omitempty"`
}

// hookProvider is what differs between the CI systems.
type hookProvider struct {
	name string
	// verifies reports whether t's trigger of this provider signed r's body.
	verifies func(t *template.Template, body []byte, h http.Header) bool
	matches  func(t *template.Template, ev cihook.Event) bool
	parse    func(event string, body []byte) (cihook.Event, error)
	// eventHeader and deliveryHeader name the event and its delivery id.
	eventHeader, deliveryHeader string
}

var (
	githubHook = hookProvider{
		name: "github",
		verifies: func(t *template.Template, body []byte, h http.Header) bool {
			g := t.Triggers.GitHub
			return g != nil && cihook.VerifyGitHub(g.Secret, body, h.Get("X-Hub-Signature-256"))
		},
		matches: func(t *template.Template, ev cihook.Event) bool {
			return t.Triggers.GitHub.Matches(ev.Repository, ev.Branch)
		},
		parse:          cihook.ParseGitHub,
		eventHeader:    "X-GitHub-Event",
		deliveryHeader: "X-GitHub-Delivery",
	}
	gitlabHook = hookProvider{
		name: "gitlab",
		verifies: func(t *template.Template, _ []byte, h http.Header) bool {
			g := t.Triggers.GitLab
			return g != nil && cihook.VerifyGitLab(g.Token, h.Get("X-Gitlab-Token"))
		},
		matches: func(t *template.Template, ev cihook.Event) bool {
			return t.Triggers.GitLab.Matches(ev.Repository, ev.Branch)
		},
		parse:          cihook.ParseGitLab,
		eventHeader:    "X-Gitlab-Event",
		deliveryHeader: "X-Gitlab-Event-UUID",
	}
)

// handleGitHubHook runs the templates a GitHub delivery triggers.
//
//	@Summary		Receive a GitHub webhook
//	@Description	No API key: the X-Hub-Signature-256 HMAC of the raw body with a template's GitHub secret is the authentication, checked before the body is parsed, against every template with a GitHub trigger. push (a branch's new head) and pull_request (opened, synchronize, reopened) run each verified template whose repository and branches match (a pull request matches by the branch it merges into), with commit, branch, repo and pr as values and labels. ping is answered 200. The same X-GitHub-Delivery (or Idempotency-Key) again creates nothing and answers with the first delivery's jobs.
//	@Tags			hooks
//	@Accept			json
//	@Produce		json
//	@Param			X-GitHub-Event		header		string	true	"push, pull_request or ping"
//	@Param			X-GitHub-Delivery	header		string	false	"the delivery id: a replay of it creates no job"
//	@Param			X-Hub-Signature-256	header		string	true	"sha256=<hex HMAC-SHA256 of the body>"
//	@Success		200					{object}	HookResponse	"a ping, or a replay: the jobs the first delivery created"
//	@Success		201					{object}	HookResponse	"jobs created"
//	@Success		202					{object}	HookResponse	"verified, nothing to run: message says why (no template for that repository and branch, a tag, a deleted branch, an action that runs nothing)"
//	@Failure		401					{object}	Problem	"bad-signature: no template's secret signs the body; nothing created"
//	@Failure		413					{object}	Problem	"body over 4 MiB"
//	@Failure		422					{object}	Problem	"the rendered job is invalid"
//	@Failure		429					{object}	Problem	"over a quota of the template's owner"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; the CI system retries later"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Router			/v1/hooks/github [post]
func (s *Server) handleGitHubHook(c echo.Context) error { return s.serveHook(c, githubHook) }

// handleGitLabHook runs the templates a GitLab delivery triggers.
//
//	@Summary		Receive a GitLab webhook
//	@Description	No API key: X-Gitlab-Token must equal a template's GitLab token (compared in constant time). Push Hook and Merge Request Hook (open, reopen, update with new commits) run each such template whose project and branches match (a merge request by its target branch). The same X-Gitlab-Event-UUID (or Idempotency-Key) again creates nothing.
//	@Tags			hooks
//	@Accept			json
//	@Produce		json
//	@Param			X-Gitlab-Event		header		string	true	"Push Hook or Merge Request Hook"
//	@Param			X-Gitlab-Event-UUID	header		string	false	"the delivery id: a replay of it creates no job"
//	@Param			X-Gitlab-Token		header		string	true	"the template's token"
//	@Success		200					{object}	HookResponse	"a replay: the jobs the first delivery created"
//	@Success		201					{object}	HookResponse	"jobs created"
//	@Success		202					{object}	HookResponse	"verified, nothing to run: message says why"
//	@Failure		401					{object}	Problem	"bad-signature: no template has that token; nothing created"
//	@Failure		413					{object}	Problem	"body over 4 MiB"
//	@Failure		422					{object}	Problem	"the rendered job is invalid"
//	@Failure		429					{object}	Problem	"over a quota of the template's owner"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; the CI system retries later"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Router			/v1/hooks/gitlab [post]
func (s *Server) handleGitLabHook(c echo.Context) error { return s.serveHook(c, gitlabHook) }

func (s *Server) serveHook(c echo.Context, hp hookProvider) error {
	st, err := s.templateStore()
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, hookBodyLimit))
	if err != nil {
		s.metrics.hookRejected.WithLabelValues(hp.name, "body").Inc()
		return decodeError(err, hookBodyLimit)
	}
	ctx := c.Request().Context()
	all, err := st.ListAllTemplates(ctx)
	if err != nil {
		return fmt.Errorf("api: %s hook: %w", hp.name, err)
	}
	// Every template's secret is tried on the raw body before any byte
	// of it is parsed: an unsigned body is never read as JSON.
	var verified []*template.Template
	for _, t := range all {
		if hp.verifies(t, body, c.Request().Header) {
			verified = append(verified, t)
		}
	}
	if len(verified) == 0 {
		s.metrics.hookRejected.WithLabelValues(hp.name, "signature").Inc()
		return fmt.Errorf("%w: no template's %s secret matches this delivery", errBadSignature, hp.name)
	}
	ev, err := hp.parse(c.Request().Header.Get(hp.eventHeader), body)
	if err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	switch ev.Kind {
	case cihook.Ping:
		return c.JSON(http.StatusOK, HookResponse{Message: "pong"})
	case cihook.Ignore:
		return c.JSON(http.StatusAccepted, HookResponse{Message: ev.Why})
	}
	var run []*template.Template
	for _, t := range verified {
		if hp.matches(t, ev) {
			run = append(run, t)
		}
	}
	if len(run) == 0 {
		return c.JSON(http.StatusAccepted, HookResponse{Message: fmt.Sprintf("branch %q of %s triggers no template", ev.Branch, ev.Repository)})
	}
	delivery := c.Request().Header.Get(hp.deliveryHeader)
	if delivery == "" {
		delivery = c.Request().Header.Get(idempotencyHeader)
	}
	sum := sha256.Sum256(body)
	resp, status := HookResponse{}, http.StatusOK
	for _, t := range run {
		hj, err := s.runHookTemplate(c, hp, t, ev, delivery, hex.EncodeToString(sum[:]))
		if err != nil {
			// Jobs already created stay, and a redelivery creates only
			// the rest: each template has its own delivery record.
			return err
		}
		if !hj.Replayed {
			status = http.StatusCreated
		}
		resp.Jobs = append(resp.Jobs, hj)
	}
	return c.JSON(status, resp)
}

// runHookTemplate runs t for ev once per delivery id: the id is claimed
// as an Idempotency-Key of t's owner (scoped to the provider and t), so a
// redelivery finds the job the first one created.
func (s *Server) runHookTemplate(c echo.Context, hp hookProvider, t *template.Template, ev cihook.Event, delivery, bodyHash string) (HookJob, error) {
	ctx := c.Request().Context()
	source := hp.name + " delivery " + delivery + " (request " + requestID(c) + ")"
	values := map[string]string{template.Commit: ev.Commit, template.Branch: ev.HeadBranch, template.Repo: ev.Repository}
	if ev.PR != "" {
		values[template.PR] = ev.PR
	}
	runOnce := func() (HookJob, error) {
		j, _, err := s.RunTemplate(ctx, t, TemplateRun{Values: values, Labels: ev.Labels(), Source: source})
		if err != nil {
			return HookJob{}, err
		}
		s.log.Info("api: CI delivery started a job", "provider", hp.name, "delivery", delivery,
			"template", t.Name, "owner", t.Owner, "job", j.ID, "repo", ev.Repository, "commit", ev.Commit)
		return HookJob{Template: t.Name, JobID: j.ID, Location: jobPath(j.ID)}, nil
	}
	if delivery == "" || s.idempotency == nil {
		return runOnce()
	}
	key := hp.name + " delivery " + delivery + " template " + t.Name
	rec, won, err := s.idempotency.ClaimIdempotencyKey(ctx, t.Owner, key, bodyHash)
	switch {
	case err != nil:
		return HookJob{}, fmt.Errorf("api: %s delivery %s: %w", hp.name, delivery, err)
	case !won && rec.Pending():
		return HookJob{}, fmt.Errorf("%w: delivery %s is being processed", errIdempotencyPending, delivery)
	case !won:
		return HookJob{Template: t.Name, JobID: rec.JobID, Location: jobPath(rec.JobID), Replayed: true}, nil
	}
	hj, err := runOnce()
	if err != nil {
		s.undo.run("release delivery "+delivery, store.IdempotencyClaimTTL, func(ctx2 context.Context) error {
			if err := s.idempotency.ReleaseIdempotencyKey(ctx2, rec); err != nil && !errors.Is(err, store.ErrIdempotencyClaimLost) {
				return err
			}
			return nil
		})
		return HookJob{}, err
	}
	if err := s.idempotency.CompleteIdempotencyKey(context.WithoutCancel(ctx), rec, hj.JobID, false); err != nil {
		s.log.Error("api: record CI delivery", "provider", hp.name, "delivery", delivery, "job", hj.JobID, "err", err)
	}
	return hj, nil
}
