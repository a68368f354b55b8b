package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
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

// Errors the handlers return that are not domain errors.
var (
	errMalformed   = errors.New("api: malformed request body")
	errTooLarge    = errors.New("api: request body too large")
	errBadQuery    = errors.New("api: bad query parameter")
	errUnavailable = errors.New("api: dependency unavailable")
	errNoURLPolicy = errors.New("api: no URL policy configured")
	errJobFinished = errors.New("api: job already finished")
	errForbidden   = errors.New("api: forbidden")
	// errUnauthorized, errTooManyActive, errRateLimited, errTooManyStreams:
	// auth.go, quota.go, streams.go.
)

// problemKind is one row of the error table.
type problemKind struct {
	err    error
	status int
	slug   string
	title  string
	// echo is true when the error's own text is written for the client
	// (validation messages); otherwise the title is all the client sees.
	echo bool
	// retry marks a condition that passes by itself: its answer carries
	// Retry-After.
	retry bool
}

// problemKinds is THE table from errors to problems; the first row whose
// error matches (errors.Is) wins. Anything unmatched is an internal error.
func problemKinds() []problemKind {
	return []problemKind{
		// First: Redis down or refusing writes, from the store or the
		// queue, on any route, whatever else the error wraps (a failed
		// verification, an unavailable dependency) is answered the same,
		// with Retry-After.
		{store.ErrUnavailable, http.StatusServiceUnavailable, "store-unavailable", "Service temporarily unavailable", false, true},
		{errTooLarge, http.StatusRequestEntityTooLarge, "body-too-large", "Request body too large", true, false},
		{errMalformed, http.StatusBadRequest, "malformed-body", "Malformed request body", true, false},
		// Before job.ErrInvalid: an unverified target also wraps the
		// *job.ValidationError that names its fields.
		{targetverify.ErrUnverified, http.StatusUnprocessableEntity, "target-unverified", "Target host not verified", true, false},
		{errBadTarget, http.StatusUnprocessableEntity, "invalid-target", "Invalid target URL", true, false},
		{job.ErrInvalid, http.StatusUnprocessableEntity, "validation", "Invalid job spec", true, false},
		{errBadQuery, http.StatusBadRequest, "bad-query", "Invalid query parameter", true, false},
		{store.ErrInvalidCursor, http.StatusBadRequest, "bad-query", "Invalid cursor", false, false},
		{store.ErrNotFound, http.StatusNotFound, "not-found", "Not found", false, false},
		{errJobFinished, http.StatusConflict, "job-finished", "Job already finished", true, false},
		{errTemplateExists, http.StatusConflict, "template-exists", "Template already exists", true, false},
		{errBadSignature, http.StatusUnauthorized, "bad-signature", "Webhook signature not valid", true, false},
		{errNoDelivery, http.StatusBadRequest, "delivery-id-required", "Delivery id required", true, false},
		{errIdempotencyKey, http.StatusBadRequest, "bad-idempotency-key", "Invalid Idempotency-Key", true, false},
		{errIdempotencyConflict, http.StatusConflict, "idempotency-conflict", "Idempotency-Key reused with another body", true, false},
		{errIdempotencyPending, http.StatusConflict, "idempotency-in-progress", "Idempotency-Key request in progress", true, false},
		{errDeliveryInFlight, http.StatusConflict, "delivery-in-flight", "Delivery still in flight", true, false},
		{store.ErrConflict, http.StatusConflict, "conflict", "Conflict", false, false},
		{errUnavailable, http.StatusServiceUnavailable, "unavailable", "Service unavailable", false, false},
		{errUnauthorized, http.StatusUnauthorized, "unauthorized", "Unauthorized", true, false},
		{errForbidden, http.StatusForbidden, "forbidden", "Forbidden", true, false},
		{errMisdirected, http.StatusMisdirectedRequest, "misdirected-request", "Host not served here", true, false},
		{errCrossSite, http.StatusForbidden, "cross-site-request", "Cross-site request refused", true, false},
		{errNotJSON, http.StatusUnsupportedMediaType, "unsupported-media-type", "Unsupported media type", true, false},
		{errTooManyActive, http.StatusTooManyRequests, "too-many-active-jobs", "Too many active jobs", true, false},
		{errRateLimited, http.StatusTooManyRequests, "rate-limited", "Submission rate exceeded", true, false},
		{errTooManyStreams, http.StatusTooManyRequests, "too-many-streams", "Too many event streams", true, false},
		{errTooManyTemplates, http.StatusTooManyRequests, "too-many-templates", "Template limit reached", true, false},
		{errTemplateBytes, http.StatusTooManyRequests, "template-bytes-exceeded", "Template storage limit reached", true, false},
		{errTooManySchedules, http.StatusTooManyRequests, "too-many-schedules", "Schedule limit reached", true, false},
		{errTooManyPins, http.StatusTooManyRequests, "too-many-pins", "Pinned job limit reached", true, false},
		{errRepositoryCrowded, http.StatusTooManyRequests, "repository-templates-exceeded", "Too many templates for the repository", true, false},
	}
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
	for _, k := range problemKinds() {
		if errors.Is(err, k.err) {
			p = Problem{Type: problemBase + k.slug, Title: k.title, Status: k.status}
			if k.echo {
				p.Detail = err.Error()
				addFields(&p, err)
				quotaFields(&p, err)
			}
			if cond, ok := store.ConditionOf(err); ok {
				p.Detail = unavailableDetail(cond)
			}
			return p, false, k.retry
		}
	}
	return Problem{
		Type:   problemBase + "internal",
		Title:  "Internal error",
		Status: http.StatusInternalServerError,
		Detail: "an internal error occurred; quote the request id when reporting it",
	}, true, false
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

// addFields copies a validation error's field list into the problem.
func addFields(p *Problem, err error) {
	var ve *job.ValidationError
	if !errors.As(err, &ve) {
		var fe fieldError
		if errors.As(err, &fe) {
			p.Field = fe.field
		}
		return
	}
	p.Detail = fmt.Sprintf("%d problem(s) in the job spec", len(ve.Problems))
	for _, fp := range ve.Problems {
		p.Errors = append(p.Errors, FieldProblem{Field: fp.Field, Message: fp.Message})
	}
	if len(ve.Problems) == 1 {
		p.Field = ve.Problems[0].Field
		p.Detail = ve.Problems[0].Message
	}
}

// fieldError attaches a field name (a query parameter) to an error.
type fieldError struct {
	field string
	err   error
}

func (e fieldError) Error() string { return e.err.Error() }
func (e fieldError) Unwrap() error { return e.err }

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
	var qe *quotaError
	if errors.As(err, &qe) && qe.retryAfter > 0 {
		setRetryAfter(c, qe.retryAfter)
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
