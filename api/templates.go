package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

// TemplateStore keeps job templates and finds the key that owns one;
// *store.Store implements it.
type TemplateStore interface {
	// PutTemplateWithin stores t unless it takes its owner, or its
	// repository, past lim (a *store.LimitError).
	PutTemplateWithin(ctx context.Context, t *template.Template, lim store.TemplateLimits) (bool, error)
	// TemplatesForRepository returns at most max templates whose trigger
	// of provider names repository.
	TemplatesForRepository(ctx context.Context, provider, repository string, max int) ([]*template.Template, error)
	GetTemplate(ctx context.Context, owner, name string) (*template.Template, error)
	ListTemplates(ctx context.Context, owner string) ([]*template.Template, error)
	ListAllTemplates(ctx context.Context) ([]*template.Template, error)
	DeleteTemplate(ctx context.Context, owner, name string) error
	KeyByID(ctx context.Context, id string) (apikey.Key, error)
}

var (
	errNoTemplates = errors.New("templates are not configured on this server")
)

// TemplateBody is a template as a client writes it.
type TemplateBody struct {
	// Name may be left out of a PUT, whose path names the template.
	Name string `json:"name" example:"checkout-main"`
	// Spec is a job spec; its string values may hold placeholders in
	// double braces: commit, branch, target_url, pr, repo and those
	// declared in values.
	Spec json.RawMessage `json:"spec" swaggertype:"object"`
	// Values declares placeholders, each with its default ("": every run
	// must give it); a built-in one may get a default too.
	Values   map[string]string  `json:"values,omitempty"`
	Schedule *template.Schedule `json:"schedule,omitempty"`
	Triggers template.Triggers  `json:"triggers,omitzero"`
}

// TemplateResponse is a template as the API shows it: trigger secrets
// and the spec's secrets as "[redacted]".
type TemplateResponse struct {
	template.Template
	// Owner is the API key id the template and its jobs belong to.
	Owner string        `json:"owner" example:"key_01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	Links TemplateLinks `json:"links"`
}

// TemplateLinks are the URLs of a template.
type TemplateLinks struct {
	Self string `json:"self" example:"/v1/templates/checkout-main"`
	Run  string `json:"run" example:"/v1/templates/checkout-main/run"`
}

// ListTemplatesResponse lists templates by name (an admin's: by owner
// and name).
type ListTemplatesResponse struct {
	Templates []TemplateResponse `json:"templates"`
}

// RunTemplateRequest gives the values of one run.
type RunTemplateRequest struct {
	Values map[string]string `json:"values,omitempty"`
}

func templatePath(name string) string { return "/v1/templates/" + name }

func newTemplateResponse(t *template.Template) TemplateResponse {
	self := templatePath(t.Name)
	return TemplateResponse{Template: t.Redacted(), Owner: t.Owner, Links: TemplateLinks{Self: self, Run: self + "/run"}}
}

// decodeTemplate reads a template body strictly: unknown fields are
// refused, and the spec is decoded as POST /v1/jobs decodes one, with
// every field path under "spec.".
func (s *Server) decodeTemplate(c echo.Context) (template.Template, error) {
	var b TemplateBody
	if err := readBody(c, s.cfg.MaxBody, &b); err != nil { // body.go
		return template.Template{}, err
	}
	if len(b.Spec) == 0 {
		return template.Template{}, job.Invalid([]job.FieldError{{Field: "spec", Message: "required: a job spec"}})
	}
	spec, err := job.Decode(bytes.NewReader(b.Spec))
	if err != nil {
		return template.Template{}, specFields(err)
	}
	return template.Template{Name: b.Name, Spec: spec, Values: b.Values, Schedule: b.Schedule, Triggers: b.Triggers}, nil
}

// specFields puts "spec." before each field a spec's decoding names.
func specFields(err error) error {
	ve, ok := job.AsInvalid(err)
	if !ok {
		return err
	}
	out := make([]job.FieldError, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		if p.Field == "" {
			p.Field = "spec"
		} else {
			p.Field = "spec." + p.Field
		}
		out = append(out, p)
	}
	return job.Invalid(out)
}

// templateOwner is whose templates a request addresses: the caller's, or
// for an admin the key named by ?owner=.
func templateOwner(c echo.Context) (string, error) {
	p := principalOf(c)
	if p.KeyID == "" {
		return "", errors.New("api: templates: a caller without an owner")
	}
	if o := c.QueryParam("owner"); o != "" && o != p.KeyID {
		if !p.Admin {
			return "", fmt.Errorf("api: template of another owner: %w", store.ErrNotFound)
		}
		return o, nil
	}
	return p.KeyID, nil
}

func (s *Server) templateStore() (TemplateStore, error) {
	if s.templates == nil {
		return nil, errcode.Wrap(errNoTemplates, errcode.Unavailable, errNoTemplates.Error())
	}
	return s.templates, nil
}

// ownedTemplates is the template store and the owner whose templates the
// request reads (templateOwner).
func (s *Server) ownedTemplates(c echo.Context) (TemplateStore, string, error) {
	st, err := s.templateStore()
	if err != nil {
		return nil, "", err
	}
	owner, err := templateOwner(c)
	if err != nil {
		return nil, "", err
	}
	return st, owner, nil
}

// handleCreateTemplate saves a new template.
//
//	@Summary		Create a job template
//	@Description	A job spec with placeholders (commit, branch, target_url, pr, repo and those declared in values, each written in double braces), CI triggers and a schedule. Every placeholder must be known; the spec is validated as a job once rendered, at each run. Trigger secrets are stored and never shown again.
//	@Tags			templates
//	@Accept			json
//	@Produce		json
//	@Param			template	body		TemplateBody	true	"the template"
//	@Success		201			{object}	TemplateResponse
//	@Header			201			{string}	Location	"/v1/templates/{name}"
//	@Failure		400			{object}	Problem	"malformed JSON"
//	@Failure		401			{object}	Problem	"no valid API key"
//	@Failure		409			{object}	Problem	"template-exists: the key has a template of that name (PUT replaces it)"
//	@Failure		422			{object}	Problem	"invalid fields, each named"
//	@Failure		429			{object}	Problem	"too-many-templates, template-bytes-exceeded, too-many-schedules: over a storage limit of the key (limit and value name it); repository-templates-exceeded: the repository has the most templates a trigger may bind to it"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/templates [post]
func (s *Server) handleCreateTemplate(c echo.Context) error {
	st, err := s.templateStore()
	if err != nil {
		return err
	}
	t, err := s.decodeTemplate(c)
	if err != nil {
		return err
	}
	t.Owner = principalOf(c).KeyID
	if err := validateTemplate(&t); err != nil { // schedules.go: and its schedule
		return err
	}
	ctx := c.Request().Context()
	// Checked, then written: two creations of one name at once may both
	// pass, and the second replaces the first, as a PUT would.
	if _, err := st.GetTemplate(ctx, t.Owner, t.Name); err == nil {
		return errcode.Newf(errcode.TemplateExists, "%q; PUT %s replaces it", t.Name, templatePath(t.Name))
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("api: create template: %w", err)
	}
	lim, err := s.templateLimits(ctx, principalOf(c), t.Owner)
	if err != nil {
		return fmt.Errorf("api: create template: %w", err)
	}
	if _, err := st.PutTemplateWithin(ctx, &t, lim); err != nil {
		return storageLimit(fmt.Errorf("api: create template: %w", err))
	}
	c.Response().Header().Set(echo.HeaderLocation, templatePath(t.Name))
	return c.JSON(http.StatusCreated, newTemplateResponse(&t))
}

// handlePutTemplate creates or replaces a template.
//
//	@Summary		Create or replace a job template
//	@Description	As POST /v1/templates, under the name in the path (a name in the body must be the same). Secrets left out of a trigger, or sent as "[redacted]", keep their stored value.
//	@Tags			templates
//	@Accept			json
//	@Produce		json
//	@Param			name		path		string			true	"template name"
//	@Param			template	body		TemplateBody	true	"the template"
//	@Success		200			{object}	TemplateResponse	"replaced"
//	@Success		201			{object}	TemplateResponse	"created"
//	@Failure		400			{object}	Problem	"malformed JSON"
//	@Failure		401			{object}	Problem	"no valid API key"
//	@Failure		422			{object}	Problem	"invalid fields, each named"
//	@Failure		429			{object}	Problem	"over a storage limit of the key, as for POST; a replacement only for what it adds (bytes grown, a schedule or repository added)"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/templates/{name} [put]
func (s *Server) handlePutTemplate(c echo.Context) error {
	st, owner, err := s.ownedTemplates(c)
	if err != nil {
		return err
	}
	t, err := s.decodeTemplate(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	if t.Name != "" && t.Name != name {
		return job.Invalid([]job.FieldError{{Field: "name", Message: fmt.Sprintf("%q differs from the name in the path, %q", t.Name, name)}})
	}
	t.Name, t.Owner = name, owner
	ctx := c.Request().Context()
	old, err := st.GetTemplate(ctx, owner, name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("api: put template: %w", err)
	}
	keepSecrets(&t, old)
	if err := validateTemplate(&t); err != nil { // schedules.go: and its schedule
		return err
	}
	lim, err := s.templateLimits(ctx, principalOf(c), owner)
	if err != nil {
		return fmt.Errorf("api: put template: %w", err)
	}
	created, err := st.PutTemplateWithin(ctx, &t, lim)
	if err != nil {
		return storageLimit(fmt.Errorf("api: put template: %w", err))
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Response().Header().Set(echo.HeaderLocation, templatePath(t.Name))
	}
	return c.JSON(status, newTemplateResponse(&t))
}

// keepSecrets fills the trigger secrets a replacement leaves out (or
// sends back redacted, as a GET showed them) from the template it
// replaces, so a client can edit a template it read without knowing them.
func keepSecrets(t, old *template.Template) {
	if old == nil {
		return
	}
	keep := func(s *string, was string) {
		if *s == "" || *s == job.RedactedValue {
			*s = was
		}
	}
	if g, o := t.Triggers.GitHub, old.Triggers.GitHub; g != nil && o != nil {
		keep(&g.Secret, o.Secret)
		keep(&g.APIToken, o.APIToken)
	}
	if g, o := t.Triggers.GitLab, old.Triggers.GitLab; g != nil && o != nil {
		keep(&g.Token, o.Token)
		keep(&g.APIToken, o.APIToken)
	}
}

// handleListTemplates lists the caller's templates.
//
//	@Summary		List job templates
//	@Description	The caller's templates by name; an admin's list holds every key's, by owner and name.
//	@Tags			templates
//	@Produce		json
//	@Success		200	{object}	ListTemplatesResponse
//	@Failure		401	{object}	Problem	"no valid API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/templates [get]
func (s *Server) handleListTemplates(c echo.Context) error {
	st, err := s.templateStore()
	if err != nil {
		return err
	}
	p := principalOf(c)
	if p.KeyID == "" {
		return errors.New("api: list templates: a caller without an owner")
	}
	ctx := c.Request().Context()
	var list []*template.Template
	if p.Admin {
		list, err = st.ListAllTemplates(ctx)
	} else {
		list, err = st.ListTemplates(ctx, p.KeyID)
	}
	if err != nil {
		return fmt.Errorf("api: list templates: %w", err)
	}
	out := ListTemplatesResponse{Templates: make([]TemplateResponse, 0, len(list))}
	for _, t := range list {
		out.Templates = append(out.Templates, newTemplateResponse(t))
	}
	return c.JSON(http.StatusOK, out)
}

// ownedTemplate loads the template a request names.
func (s *Server) ownedTemplate(c echo.Context) (*template.Template, error) {
	st, owner, err := s.ownedTemplates(c)
	if err != nil {
		return nil, err
	}
	t, err := st.GetTemplate(c.Request().Context(), owner, c.Param("name"))
	if err != nil {
		return nil, fmt.Errorf("api: get template: %w", err)
	}
	return t, nil
}

// handleGetTemplate shows one template.
//
//	@Summary		Get a job template
//	@Tags			templates
//	@Produce		json
//	@Param			name	path		string	true	"template name"
//	@Param			owner	query		string	false	"an admin's: the key id owning the template"
//	@Success		200		{object}	TemplateResponse
//	@Failure		401		{object}	Problem	"no valid API key"
//	@Failure		404		{object}	Problem	"no such template of the caller's key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/templates/{name} [get]
func (s *Server) handleGetTemplate(c echo.Context) error {
	t, err := s.ownedTemplate(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newTemplateResponse(t))
}

// handleDeleteTemplate deletes a template; its jobs stay.
//
//	@Summary		Delete a job template
//	@Tags			templates
//	@Param			name	path	string	true	"template name"
//	@Param			owner	query	string	false	"an admin's: the key id owning the template"
//	@Success		204
//	@Failure		401	{object}	Problem	"no valid API key"
//	@Failure		404	{object}	Problem	"no such template of the caller's key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/templates/{name} [delete]
func (s *Server) handleDeleteTemplate(c echo.Context) error {
	st, owner, err := s.ownedTemplates(c)
	if err != nil {
		return err
	}
	if err := st.DeleteTemplate(c.Request().Context(), owner, c.Param("name")); err != nil {
		return fmt.Errorf("api: delete template: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

// handleRunTemplate creates a job from a template.
//
//	@Summary		Run a job template
//	@Description	Renders the template with the values given (over its defaults) and submits the job as POST /v1/jobs would, for the template's owner: same validation, address policy, quotas and answer. The job is labelled template=<name>. A value lands escaped for where it goes: inside a URL as one percent-encoded component.
//	@Tags			templates
//	@Accept			json
//	@Produce		json
//	@Param			name	path		string				true	"template name"
//	@Param			owner	query		string				false	"an admin's: the key id owning the template"
//	@Param			run		body		RunTemplateRequest	false	"the placeholders' values"
//	@Success		201		{object}	CreateJobResponse
//	@Header			201		{string}	Location	"/v1/jobs/{id}"
//	@Failure		400		{object}	Problem	"malformed JSON"
//	@Failure		401		{object}	Problem	"no valid API key"
//	@Failure		404		{object}	Problem	"no such template of the caller's key"
//	@Failure		422		{object}	Problem	"an unknown or missing placeholder (values.<name>, or the spec field), or the rendered job is invalid"
//	@Failure		429		{object}	Problem	"over a quota of the template's owner"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/templates/{name}/run [post]
func (s *Server) handleRunTemplate(c echo.Context) error {
	t, err := s.ownedTemplate(c)
	if err != nil {
		return err
	}
	var req RunTemplateRequest
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, s.cfg.MaxBody))
	if err != nil {
		return decodeError(err, s.cfg.MaxBody)
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := job.DecodeBody(data, &req); err != nil {
			return err
		}
	}
	j, secret, err := s.admit.RunTemplate(c.Request().Context(), t, admit.TemplateRun{Values: req.Values, Source: sourceOf(c, admit.ViaTemplateRun)})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, jobPath(j.ID))
	return c.JSON(http.StatusCreated, CreateJobResponse{JobResponse: newJobResponse(j), WebhookSecret: secret})
}
