package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Problem is the RFC 9457 problem+json body benchq sends with every error.
type Problem struct {
	Type      string         `json:"type"`
	Title     string         `json:"title"`
	Status    int            `json:"status"`
	Detail    string         `json:"detail,omitempty"`
	Field     string         `json:"field,omitempty"`
	Errors    []FieldProblem `json:"errors,omitempty"`
	RequestID string         `json:"request_id,omitempty"`
}

// FieldProblem is one invalid field of a validation problem.
type FieldProblem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// APIError is a non-2xx answer. Problem is filled from the body when it is
// problem+json; otherwise Problem.Detail holds the body's first bytes.
type APIError struct {
	Method  string
	Path    string
	Status  int
	Problem Problem
	// RetryAfter is the server's Retry-After header, zero when absent or
	// unreadable.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.Path, e.Status, e.Problem.Title)
	if d := e.Problem.Detail; d != "" {
		b.WriteString(": " + d)
	}
	if len(e.Problem.Errors) > 1 {
		for _, fp := range e.Problem.Errors {
			fmt.Fprintf(&b, "\n  %s: %s", fp.Field, fp.Message)
		}
	} else if f := e.Problem.Field; f != "" {
		fmt.Fprintf(&b, " (field %s)", f)
	}
	if id := e.Problem.RequestID; id != "" {
		fmt.Fprintf(&b, " [request %s]", id)
	}
	return b.String()
}

// Is lets errors.Is(err, ErrNotFound) and ErrConflict match by status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	}
	return false
}

// Temporary reports whether retrying the same call may succeed.
func (e *APIError) Temporary() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

func readAPIError(req *http.Request, resp *http.Response) *APIError {
	e := &APIError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	if json.Unmarshal(b, &e.Problem) != nil || e.Problem.Title == "" {
		detail := strings.TrimSpace(string(b))
		if len(detail) > 512 {
			detail = detail[:512] + "..."
		}
		e.Problem = Problem{Title: http.StatusText(resp.StatusCode), Status: resp.StatusCode, Detail: detail}
	}
	return e
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP date
// (RFC 9110 10.2.3); anything else, or a date in the past, is zero.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return t.Sub(now)
}
