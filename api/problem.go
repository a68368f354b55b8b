package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/store"
)

// problemBase prefixes every problem type URI. The URIs are identifiers that
// clients switch on; they must never change once published.
const problemBase = "https://benchq.dev/problems/"

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type     string `json:"type" example:"https://benchq.dev/problems/validation"`
	Title    string `json:"title" example:"Invalid job spec"`
	Status   int    `json:"status" example:"422"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty" example:"/v1/jobs"`
	// Field names the offending input when there is exactly one.
	Field string `json:"field,omitempty" example:"sweep.concurrency[0]"`
	// Errors lists every invalid field of a validation problem.
	Errors []FieldProblem `json:"errors,omitempty"`
	// Limit is the quota a 429 hit, and Value the caller's count against
	// it where one is known (jobs queued or running, templates, their
	// bytes, schedules, pinned jobs).
	Limit     int    `json:"limit,omitempty" example:"10"`
	Value     int    `json:"value,omitempty" example:"10"`
	RequestID string `json:"request_id,omitempty"`
}

// FieldProblem is one invalid field.
type FieldProblem struct {
	Field   string `json:"field" example:"sweep.concurrency[0]"`
	Message string `json:"message" example:"must be at least 1"`
}

// errNoURLPolicy is an internal error: a server built without an address
// policy refuses every target rather than load any address. What a
// client did wrong is an *errcode.Error; its code picks the problem.
var errNoURLPolicy = errors.New("no URL policy configured")

// problemType is how the API answers one error code.
type problemType struct {
	status int
	// slug is the last segment of the problem type URI; "" is the code.
	slug  string
	title string
	// detail is true when the error's message is shown as the problem's
	// detail; otherwise the title is all the client reads.
	detail bool
	// retry marks a condition that passes by itself: its answer carries
	// Retry-After.
	retry bool
}

// problemTypes is THE table from error codes to problems. An error
// without a code, or with one missing here, is an internal error; a test
// checks every code has a row.
var problemTypes = map[errcode.Code]problemType{
	// Redis down or refusing writes, from the store or the queue, on any
	// route: whatever else the error carries (a failed verification, an
	// unavailable dependency), it is answered the same, with Retry-After
	// (problemFor looks for this code first).
	errcode.StoreUnavailable:      {http.StatusServiceUnavailable, "", "Service temporarily unavailable", false, true},
	errcode.BodyTooLarge:          {http.StatusRequestEntityTooLarge, "", "Request body too large", true, false},
	errcode.MalformedBody:         {http.StatusBadRequest, "", "Malformed request body", true, false},
	errcode.TargetUnverified:      {http.StatusUnprocessableEntity, "", "Target host not verified", true, false},
	errcode.InvalidTarget:         {http.StatusUnprocessableEntity, "", "Invalid target URL", true, false},
	errcode.InvalidSpec:           {http.StatusUnprocessableEntity, "", "Invalid job spec", true, false},
	errcode.BadQuery:              {http.StatusBadRequest, "", "Invalid query parameter", true, false},
	errcode.InvalidCursor:         {http.StatusBadRequest, "bad-query", "Invalid cursor", false, false},
	errcode.NotFound:              {http.StatusNotFound, "", "Not found", false, false},
	errcode.JobFinished:           {http.StatusConflict, "", "Job already finished", true, false},
	errcode.TemplateExists:        {http.StatusConflict, "", "Template already exists", true, false},
	errcode.BadSignature:          {http.StatusUnauthorized, "", "Webhook signature not valid", true, false},
	errcode.NoDeliveryID:          {http.StatusBadRequest, "", "Delivery id required", true, false},
	errcode.BadIdempotencyKey:     {http.StatusBadRequest, "", "Invalid Idempotency-Key", true, false},
	errcode.IdempotencyConflict:   {http.StatusConflict, "", "Idempotency-Key reused with another body", true, false},
	errcode.IdempotencyInProgress: {http.StatusConflict, "", "Idempotency-Key request in progress", true, false},
	errcode.DeliveryInFlight:      {http.StatusConflict, "", "Delivery still in flight", true, false},
	errcode.Conflict:              {http.StatusConflict, "", "Conflict", false, false},
	errcode.Unavailable:           {http.StatusServiceUnavailable, "", "Service unavailable", false, false},
	errcode.Unauthorized:          {http.StatusUnauthorized, "", "Unauthorized", true, false},
	errcode.Forbidden:             {http.StatusForbidden, "", "Forbidden", true, false},
	errcode.MisdirectedRequest:    {http.StatusMisdirectedRequest, "", "Host not served here", true, false},
	errcode.CrossSiteRequest:      {http.StatusForbidden, "", "Cross-site request refused", true, false},
	errcode.UnsupportedMedia:      {http.StatusUnsupportedMediaType, "", "Unsupported media type", true, false},
	errcode.TooManyActiveJobs:     {http.StatusTooManyRequests, "", "Too many active jobs", true, false},
	errcode.RateLimited:           {http.StatusTooManyRequests, "", "Submission rate exceeded", true, false},
	errcode.TooManyStreams:        {http.StatusTooManyRequests, "", "Too many event streams", true, false},
	errcode.TooManyTemplates:      {http.StatusTooManyRequests, "", "Template limit reached", true, false},
	errcode.TemplateBytes:         {http.StatusTooManyRequests, "", "Template storage limit reached", true, false},
	errcode.TooManySchedules:      {http.StatusTooManyRequests, "", "Schedule limit reached", true, false},
	errcode.TooManyPins:           {http.StatusTooManyRequests, "", "Pinned job limit reached", true, false},
	errcode.RepositoryTemplates:   {http.StatusTooManyRequests, "", "Too many templates for the repository", true, false},
}

// httpKinds name echo's own errors (routing, method, body limit).
func httpKind(code int) (slug, title string) {
	switch code {
	case http.StatusNotFound:
		return "not-found", "Not found"
	case http.StatusMethodNotAllowed:
		return "method-not-allowed", "Method not allowed"
	case http.StatusRequestEntityTooLarge:
		return "body-too-large", "Request body too large"
	case http.StatusBadRequest:
		return "bad-request", "Bad request"
	case http.StatusUnsupportedMediaType:
		return "unsupported-media-type", "Unsupported media type"
	case http.StatusServiceUnavailable:
		return "unavailable", "Service unavailable"
	}
	return "http-" + fmt.Sprint(code), http.StatusText(code)
}

// problemFor maps an error to the problem sent to the client, and reports
// whether it is an internal error that must be logged instead of shown,
// and whether the answer should carry Retry-After.
func problemFor(err error) (p Problem, internal, retry bool) {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		slug, title := httpKind(he.Code)
		p = Problem{Type: problemBase + slug, Title: title, Status: he.Code}
		if msg, ok := he.Message.(string); ok && he.Code < 500 {
			p.Detail = msg
		}
		return p, he.Code >= 500, false
	}
	ce, coded := errcode.Of(err, errcode.StoreUnavailable)
	var pt problemType
	if coded {
		pt, coded = problemTypes[ce.Code]
	}
	if !coded {
		return Problem{
			Type:   problemBase + "internal",
			Title:  "Internal error",
			Status: http.StatusInternalServerError,
			Detail: "an internal error occurred; quote the request id when reporting it",
		}, true, false
	}
	slug := pt.slug
	if slug == "" {
		slug = string(ce.Code)
	}
	p = Problem{Type: problemBase + slug, Title: pt.title, Status: pt.status}
	if pt.detail {
		p.Detail = ce.Message
		p.Field = ce.Field()
		for _, fp := range ce.Problems {
			p.Errors = append(p.Errors, FieldProblem{Field: fp.Field, Message: fp.Message})
		}
		p.Limit, p.Value = ce.Limit, ce.Value
	}
	if cond, ok := store.ConditionOf(err); ok {
		p.Detail = unavailableDetail(cond)
	}
	return p, false, pt.retry
}

// unavailableDetail tells the client which Redis condition refused its
// request, in words that name no address or command.
func unavailableDetail(cond store.Condition) string {
	switch cond {
	case store.RefusingWrites:
		return "the data store is refusing writes; retry after the Retry-After delay"
	case store.NotReady:
		return "the data store is not ready (starting up or busy); retry after the Retry-After delay"
	case store.CredentialsRefused:
		return "the service cannot log in to its data store; an operator must fix its Redis credentials"
	}
	return "the data store is unreachable; retry after the Retry-After delay"
}

// handleError is echo's HTTPErrorHandler: every error, echo's own 404/405
// included, leaves as application/problem+json.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return // an event stream already started; nothing sane to add
	}
	p, internal, retry := problemFor(err)
	p.Instance = c.Request().URL.Path
	p.RequestID = requestID(c)
	switch {
	case internal:
		s.log.Error("api: internal error", "request_id", p.RequestID,
			"method", c.Request().Method, "route", c.Path(), "err", err)
	case retry:
		s.log.Warn("api: redis unavailable", "request_id", p.RequestID,
			"method", c.Request().Method, "route", c.Path(), "err", err)
		setRetryAfter(c, s.cfg.UnavailableRetryAfter)
	}
	if ce, ok := errcode.As(err); ok && ce.RetryAfter > 0 {
		setRetryAfter(c, ce.RetryAfter)
	}
	body, err := json.Marshal(p)
	if err == nil {
		if c.Request().Method == http.MethodHead {
			body = nil
		}
		err = c.Blob(p.Status, "application/problem+json", body)
	}
	if err != nil {
		s.log.Warn("api: write problem", "request_id", p.RequestID, "err", err)
	}
}
