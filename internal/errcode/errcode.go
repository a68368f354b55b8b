package errcode

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Code names a kind of problem. Codes are identifiers clients switch on
// (through the API's problem types): once published they never change.
type Code string

// FieldProblem is one problem with one input field. Field is a path in the
// submitted JSON ("sweep.concurrency[1]", "targets[0].url") or a query
// parameter's name; it is empty when the problem is the input as a whole.
type FieldProblem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is a coded error. Message is a sentence for the client; the
// cause, when there is one, is kept for errors.Is/As and for logs but
// never shown to a client.
type Error struct {
	Code    Code
	Message string
	// Problems lists every invalid field, in the order they were found.
	Problems []FieldProblem
	// Limit is the quota a refusal hit and Value the caller's count
	// against it, where they are known.
	Limit, Value int
	// RetryAfter, when set, is when the condition is likely to have
	// passed.
	RetryAfter time.Duration

	cause    error
	sentinel bool
}

// Sentinel returns an error for callers to test with errors.Is: it matches
// every *Error of code, whatever its message.
func Sentinel(code Code, message string) *Error {
	return &Error{Code: code, Message: message, sentinel: true}
}

// New returns an error of code with a message for the client.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Newf is New with a formatted message. The arguments are formatted with
// %v semantics only: an error among them is shown by its text, not wrapped.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of code with a message for the client that keeps
// cause for errors.Is/As and for logs.
func Wrap(cause error, code Code, message string) *Error {
	return &Error{Code: code, Message: message, cause: cause}
}

// Wrapf is Wrap with a formatted message.
func Wrapf(cause error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), cause: cause}
}

// Invalid returns an error of code listing problems. Its message is the
// one problem's when there is one, else their count.
func Invalid(code Code, problems []FieldProblem) *Error {
	e := &Error{Code: code, Problems: problems}
	switch len(problems) {
	case 0:
		e.Message = "the input is not valid"
	case 1:
		e.Message = problems[0].Message
	default:
		e.Message = fmt.Sprintf("%d problems in the input", len(problems))
	}
	return e
}

// Error returns the message, the problem of each field, then the cause:
// the whole story, for logs.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case len(e.Problems) == 1 && e.Problems[0].Message == e.Message:
		if f := e.Problems[0].Field; f != "" {
			b.WriteString(f)
			b.WriteString(": ")
		}
		b.WriteString(e.Message)
	case len(e.Problems) > 0:
		b.WriteString(e.Message)
		b.WriteString(": ")
		for i, fp := range e.Problems {
			if i > 0 {
				b.WriteString("; ")
			}
			if fp.Field != "" {
				b.WriteString(fp.Field)
				b.WriteString(": ")
			}
			b.WriteString(fp.Message)
		}
	default:
		b.WriteString(e.Message)
	}
	if e.cause != nil {
		b.WriteString(": ")
		b.WriteString(e.cause.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// Is makes a sentinel match every error of its code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.sentinel && t.Code == e.Code
}

// WithField returns a copy of e naming the one field it is about, when
// it names none yet.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.sentinel = false
	if len(c.Problems) == 0 {
		c.Problems = []FieldProblem{{Field: field, Message: c.Message}}
	}
	return &c
}

// Field is the one field the error is about, or "" when it names none or
// several.
func (e *Error) Field() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Field
	}
	return ""
}

// Of returns the coded error that decides how err is answered: the first
// one of a code in overriding, anywhere in err's tree, else the
// outermost coded error. It reports false when err carries no code (an
// internal error).
func Of(err error, overriding ...Code) (*Error, bool) {
	var first, over *Error
	walk(err, func(e *Error) bool {
		if first == nil {
			first = e
		}
		for _, c := range overriding {
			if e.Code == c {
				over = e
				return false
			}
		}
		return true
	})
	if over != nil {
		return over, true
	}
	return first, first != nil
}

// walk visits the coded errors of err's tree in pre-order until visit
// returns false.
func walk(err error, visit func(*Error) bool) bool {
	for err != nil {
		if e, ok := err.(*Error); ok && !visit(e) {
			return false
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if !walk(inner, visit) {
					return false
				}
			}
			return true
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return true
		}
	}
	return true
}

// As is errors.As for *Error.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// LineColumn locates the byte at offset in data as an editor shows it,
// for a message that points into a client's input ("line 3, column 14"):
// lines and columns count from 1, a column in bytes.
func LineColumn(data []byte, offset int) (line, col int) {
	line, col = 1, 1
	for _, b := range data[:max(0, min(offset, len(data)))] {
		if b == '\n' {
			line, col = line+1, 1
			continue
		}
		col++
	}
	return line, col
}
