package job

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every *ValidationError, so callers can
// map a bad spec to a 4xx without knowing its details.
var ErrInvalid = errors.New("job: invalid spec")

// ErrBadTransition is wrapped by Job.Transition when the lifecycle forbids
// the requested status change.
var ErrBadTransition = errors.New("job: bad status transition")

// ErrStaleAttempt is wrapped by Job.TransitionAs when the attempt asking
// no longer holds the job: another attempt started it since, so whatever
// the asker wanted to record is not its to record.
var ErrStaleAttempt = errors.New("job: attempt no longer holds the job")

// ErrCrashLoop is wrapped by Job.Start when the attempts holding the job
// died more often than the caller resumes a job: the job itself is
// likely what kills its workers.
var ErrCrashLoop = errors.New("job: its workers kept dying while running it")

// FieldError is one problem with one field of a spec. Field is a path in
// the submitted JSON ("sweep.concurrency[1]", "targets[0].url"); it is empty
// when the problem is the body as a whole (malformed JSON, trailing data).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError lists every problem found in a spec, in field order of
// discovery, so a client can fix them all in one round trip.
type ValidationError struct {
	Problems []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		if p.Field == "" {
			parts[i] = p.Message
			continue
		}
		parts[i] = p.Field + ": " + p.Message
	}
	return "job: invalid spec: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true for every ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// maxProblems bounds a ValidationError: a 1 MiB spec can hold a hundred
// thousand bad values, and a client needs the first ones to fix its input.
const maxProblems = 100

// problems collects field errors while a spec is checked. It keeps the
// first maxProblems distinct ones and only counts the rest, so what it
// holds stays bounded however many problems a spec has.
type problems struct {
	list    []FieldError
	seen    map[FieldError]bool // the kept problems, at most maxProblems
	omitted int
}

// add records a problem once: a sweep value shared by many points is
// reported a single time. Past the cap the problem is counted without
// being formatted; repeats among those are counted too, since telling
// them apart would mean keeping them.
func (p *problems) add(field, format string, args ...any) {
	if len(p.list) >= maxProblems {
		p.omitted++
		return
	}
	p.append(FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p *problems) append(list ...FieldError) {
	if p.seen == nil {
		p.seen = make(map[FieldError]bool)
	}
	for _, fe := range list {
		if p.seen[fe] {
			continue
		}
		if len(p.list) >= maxProblems {
			p.omitted++
			continue
		}
		p.seen[fe] = true
		p.list = append(p.list, fe)
	}
}

// err returns nil when nothing was collected, so callers can return it as is.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := p.list
	if p.omitted > 0 {
		list = append(list, FieldError{Message: fmt.Sprintf("%d more problems not listed", p.omitted)})
	}
	return &ValidationError{Problems: list}
}

// index builds the path of a list element: index("sweep.requests", 2) is
// "sweep.requests[2]".
func index(field string, i int) string {
	return fmt.Sprintf("%s[%d]", field, i)
}
