package api

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/job"
)

// readSpec reads the job spec of a request. A spec whose only shape
// problems are unknown fields is still checked for meaning, so that one
// answer lists the unknown fields and the invalid values together. That
// check leaves out the address policy: its lookups are charged to the
// caller's submission rate, which a spec refused anyway is not.
func (s *Server) readSpec(c echo.Context) (job.Spec, error) {
	body := http.MaxBytesReader(c.Response(), c.Request().Body, s.cfg.MaxBody)
	spec, unknown, err := job.DecodeLenient(body)
	if err != nil {
		return job.Spec{}, decodeError(err, s.cfg.MaxBody)
	}
	if unknown == nil {
		return spec, nil
	}
	problems := unknown
	if ve, ok := job.AsInvalid(spec.Validate(s.admit.Limits(principalOf(c)), nil)); ok {
		problems = append(problems, ve.Problems...)
	}
	return job.Spec{}, job.Invalid(problems)
}

// readBody reads a request body of at most limit bytes into v, a pointer
// to a struct, as strictly as a spec is read: every problem named by its
// field, malformed JSON by line and column (job.DecodeBody).
func readBody(c echo.Context, limit int64, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, limit))
	if err != nil {
		return decodeError(err, limit)
	}
	return job.DecodeBody(data, v)
}
