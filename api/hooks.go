package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/cihook"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/template"
)

// defaultHookMaxBody caps a CI delivery's body (Config.HookMaxBody), and
// is checked before any secret is: an unsigned body costs at most this
// much reading and hashing. GitHub sends up to 25 MB, but only for pushes
// of thousands of commits or files; a push of a few commits and a pull
// request take some tens of KiB, and GitLab's are of the same size.
const defaultHookMaxBody = 1 << 20

// maxRepositoryTemplates bounds the templates, of every key, whose
// trigger of one provider names one repository. A delivery is checked
// against the secrets of the templates of the repository it names, so an
// unsigned one costs at most this many HMACs over a bounded body.
const maxRepositoryTemplates = 20

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
	// Replayed: the delivery was seen before (its body, under any
	// delivery id); this job is the one its first delivery created.
	Replayed bool `json:"replayed,omitempty"`
}

// hookProvider is what differs between the CI systems.
type hookProvider struct {
	name string
	// verifies reports whether t's trigger of this provider signed r's body.
	verifies func(t *template.Template, body []byte, h http.Header) bool
	matches  func(t *template.Template, ev cihook.Event) bool
	parse    func(event string, body []byte) (cihook.Event, error)
	// repository reads the repository an unverified body names.
	repository func(body []byte) string
	// eventHeader names the event; deliveryHeaders name its delivery id,
	// the first present wins.
	eventHeader     string
	deliveryHeaders []string
	// deliveryRequired refuses a delivery without an id.
	deliveryRequired bool
	// notify is where the jobs an event starts report back to: the
	// event's repository, commit and request on this provider.
	notify func(ev cihook.Event) *job.Notify
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
		parse:            cihook.ParseGitHub,
		repository:       cihook.GitHubRepository,
		eventHeader:      "X-GitHub-Event",
		deliveryHeaders:  []string{"X-GitHub-Delivery"},
		deliveryRequired: true,
		notify: func(ev cihook.Event) *job.Notify {
			return &job.Notify{GitHub: &job.GitHubNotify{Repository: ev.Repository, SHA: ev.Commit, PR: requestNumber(ev)}}
		},
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
		parse:       cihook.ParseGitLab,
		repository:  cihook.GitLabProject,
		eventHeader: "X-Gitlab-Event",
		// GitLab (17.4 on) keeps Idempotency-Key across the retries of
		// one delivery; X-Gitlab-Event-UUID names the event.
		deliveryHeaders: []string{idempotencyHeader, "X-Gitlab-Event-UUID"},
		notify: func(ev cihook.Event) *job.Notify {
			return &job.Notify{GitLab: &job.GitLabNotify{Project: ev.Repository, SHA: ev.Commit, MergeRequest: requestNumber(ev)}}
		},
	}
)

// requestNumber is the event's pull or merge request number, 0 for a
// push (cihook checked that a request's is a positive number).
func requestNumber(ev cihook.Event) int {
	n, err := strconv.Atoi(ev.PR)
	if err != nil {
		return 0
	}
	return n
}

// deliveryID is the delivery's id as its headers give it, "" for none.
func (hp hookProvider) deliveryID(h http.Header) string {
	for _, name := range hp.deliveryHeaders {
		if v := h.Get(name); v != "" {
			return v
		}
	}
	return ""
}

// handleGitHubHook runs the templates a GitHub delivery triggers.
//
//	@Summary		Receive a GitHub webhook
//	@Description	No API key: the X-Hub-Signature-256 HMAC of the raw body with a template's GitHub secret is the authentication. Only the templates whose trigger names the repository the body names (at most 20 per repository) are tried, and nothing else of the body is read before one verifies it. push (a branch's new head) and pull_request (opened, synchronize, reopened) run each verified template whose repository and branches match (a pull request matches by the branch it merges into), with commit, branch, repo and pr as values and labels, and notify.github naming the repository, the head commit and the pull request, so the job sets that commit's status and comments on the pull request (the template's notify.github keeps its comment mode and context). ping is answered 200. X-GitHub-Delivery is required; the same delivery body again within 72 h, under that id (a redelivery) or any other (a replay), creates nothing and answers with the first delivery's jobs.
//	@Tags			hooks
//	@Accept			json
//	@Produce		json
//	@Param			X-GitHub-Event		header		string	true	"push, pull_request or ping"
//	@Param			X-GitHub-Delivery	header		string	true	"the delivery id, logged with the jobs it creates"
//	@Param			X-Hub-Signature-256	header		string	true	"sha256=<hex HMAC-SHA256 of the body>"
//	@Success		200					{object}	HookResponse	"a ping, or a redelivery or replay: the jobs the first delivery created, replayed: true"
//	@Success		201					{object}	HookResponse	"jobs created"
//	@Success		202					{object}	HookResponse	"verified, nothing to run: message says why (no template for that repository and branch, a tag, a deleted branch, an action that runs nothing)"
//	@Failure		400					{object}	Problem	"delivery-id-required: no X-GitHub-Delivery header"
//	@Failure		401					{object}	Problem	"bad-signature: no secret of a template of the repository the body names signs it; nothing created"
//	@Failure		413					{object}	Problem	"body over --hook-max-body (1 MiB), refused before any secret is checked"
//	@Failure		422					{object}	Problem	"the rendered job is invalid"
//	@Failure		429					{object}	Problem	"over a quota of the template's owner"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; the CI system retries later"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Router			/v1/hooks/github [post]
func (s *Server) handleGitHubHook(c echo.Context) error { return s.serveHook(c, githubHook) }

// handleGitLabHook runs the templates a GitLab delivery triggers.
//
//	@Summary		Receive a GitLab webhook
//	@Description	No API key: X-Gitlab-Token must equal the GitLab token of a template whose trigger names the project the body names (compared in constant time; at most 20 templates per project). Push Hook and Merge Request Hook (open, reopen, update with new commits) run each such template whose project and branches match (a merge request by its target branch), with notify.gitlab naming the project, the commit and the merge request. The same delivery body again within 72 h creates nothing and answers with the first delivery's jobs.
//	@Tags			hooks
//	@Accept			json
//	@Produce		json
//	@Param			X-Gitlab-Event		header		string	true	"Push Hook or Merge Request Hook"
//	@Param			Idempotency-Key		header		string	false	"the delivery id GitLab keeps across retries, logged with the jobs (else X-Gitlab-Event-UUID)"
//	@Param			X-Gitlab-Token		header		string	true	"the template's token"
//	@Success		200					{object}	HookResponse	"a replay: the jobs the first delivery created"
//	@Success		201					{object}	HookResponse	"jobs created"
//	@Success		202					{object}	HookResponse	"verified, nothing to run: message says why"
//	@Failure		401					{object}	Problem	"bad-signature: no template of the project the body names has that token; nothing created"
//	@Failure		413					{object}	Problem	"body over --hook-max-body (1 MiB), refused before any token is checked"
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
	body, err := s.readHookBody(c, hp)
	if err != nil {
		return err
	}
	h := c.Request().Header
	delivery := hp.deliveryID(h)
	if delivery == "" && hp.deliveryRequired {
		s.metrics.hookRejected.WithLabelValues(hp.name, "delivery").Inc()
		return errcode.Newf(errcode.NoDeliveryID, "send the %s header as %s does; a replay is recognised by it",
			hp.deliveryHeaders[0], hp.name).WithField(hp.deliveryHeaders[0])
	}
	verified, err := s.verifiedTemplates(c.Request().Context(), st, hp, body, h)
	if err != nil {
		return err
	}
	ev, err := hp.parse(h.Get(hp.eventHeader), body)
	if err != nil {
		return payloadProblem(err)
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

// readHookBody reads a delivery's body, refusing one over the cap from
// its Content-Length before reading a byte, else as it passes the cap.
func (s *Server) readHookBody(c echo.Context, hp hookProvider) ([]byte, error) {
	limit := s.cfg.HookMaxBody
	if c.Request().ContentLength > limit {
		s.metrics.hookRejected.WithLabelValues(hp.name, "body").Inc()
		return nil, errcode.Newf(errcode.BodyTooLarge, "the limit is %d bytes", limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, limit))
	if err != nil {
		s.metrics.hookRejected.WithLabelValues(hp.name, "body").Inc()
		return nil, decodeError(err, limit)
	}
	return body, nil
}

// verifiedTemplates are the templates whose secret signs the delivery.
// Only the templates bound to the repository the body names are tried
// (at most maxRepositoryTemplates), and the body is not otherwise read
// before one verifies it.
func (s *Server) verifiedTemplates(ctx context.Context, st TemplateStore, hp hookProvider, body []byte, h http.Header) ([]*template.Template, error) {
	var candidates []*template.Template
	if repo := hp.repository(body); repo != "" {
		var err error
		candidates, err = st.TemplatesForRepository(ctx, hp.name, repo, maxRepositoryTemplates)
		if err != nil {
			return nil, fmt.Errorf("api: %s hook: %w", hp.name, err)
		}
	}
	var verified []*template.Template
	for _, t := range candidates {
		if hp.verifies(t, body, h) {
			verified = append(verified, t)
		}
	}
	if len(verified) == 0 {
		s.metrics.hookRejected.WithLabelValues(hp.name, "signature").Inc()
		return nil, errcode.Newf(errcode.BadSignature, "no %s secret of a template of the repository the delivery names matches it", hp.name)
	}
	return verified, nil
}

// runHookTemplate runs t for ev once per delivery body: a redelivery (the
// same id) and a replay of a captured delivery under another id carry the
// same body, which GitHub signs, so both find the job the first one
// created. The claim is an Idempotency-Key of t's owner (scoped to the
// provider and t), kept for store.DeliveryTTL.
func (s *Server) runHookTemplate(c echo.Context, hp hookProvider, t *template.Template, ev cihook.Event, delivery, bodyHash string) (HookJob, error) {
	ctx := c.Request().Context()
	source := admit.Source{Via: admit.ViaHook, RequestID: requestID(c), Provider: hp.name, Delivery: delivery}
	values := map[string]string{template.Commit: ev.Commit, template.Branch: ev.HeadBranch, template.Repo: ev.Repository}
	if ev.PR != "" {
		values[template.PR] = ev.PR
	}
	runOnce := func() (HookJob, error) {
		j, _, err := s.admit.RunTemplate(ctx, t, admit.TemplateRun{Values: values, Labels: ev.Labels(), Notify: hp.notify(ev), Source: source})
		if err != nil {
			return HookJob{}, err
		}
		s.log.Info("api: CI delivery started a job", "provider", hp.name, "delivery", delivery,
			"template", t.Name, "owner", t.Owner, "job", j.ID, "repo", ev.Repository, "commit", ev.Commit)
		return HookJob{Template: t.Name, JobID: j.ID, Location: jobPath(j.ID)}, nil
	}
	if s.idempotency == nil {
		return HookJob{}, errcode.New(errcode.Unavailable, "CI deliveries need the idempotency store, or a replay would run twice")
	}
	key := hp.name + " delivery body " + bodyHash + " template " + t.Name
	rec, won, err := s.idempotency.ClaimIdempotencyKey(ctx, t.Owner, key, bodyHash)
	switch {
	case err != nil:
		return HookJob{}, fmt.Errorf("api: %s delivery %s: %w", hp.name, delivery, err)
	case !won && rec.Pending():
		return HookJob{}, errcode.Newf(errcode.IdempotencyInProgress, "delivery %s is being processed", delivery)
	case !won:
		s.log.Info("api: CI delivery replayed", "provider", hp.name, "delivery", delivery, "template", t.Name, "owner", t.Owner, "job", rec.JobID)
		return HookJob{Template: t.Name, JobID: rec.JobID, Location: jobPath(rec.JobID), Replayed: true}, nil
	}
	hj, err := runOnce()
	if err != nil {
		s.releaseClaimLater("release delivery "+delivery, rec)
		return HookJob{}, err
	}
	if err := s.idempotency.CompleteDelivery(context.WithoutCancel(ctx), rec, hj.JobID); err != nil {
		s.log.Error("api: record CI delivery", "provider", hp.name, "delivery", delivery, "job", hj.JobID, "err", err)
	}
	return hj, nil
}

// payloadProblem is the 400 of a delivery whose body is not its event,
// in cihook's words for the client.
func payloadProblem(err error) error {
	msg := "the request body is not the JSON of its event"
	var pe *cihook.PayloadError
	if errors.As(err, &pe) {
		msg = pe.Message
	}
	return errcode.Wrap(err, errcode.MalformedBody, msg)
}
