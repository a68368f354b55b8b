package job

import (
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/errcode"
)

// ErrInvalid is matched (errors.Is) by every invalid-spec error, so
// callers can map a bad spec to a 4xx without knowing its details.
var ErrInvalid = errcode.Sentinel(errcode.InvalidSpec, "the job spec is not valid")

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
type FieldError = errcode.FieldProblem

// Invalid is the error of a spec with problems: every one of them, in
// the order found, so a client can fix them all in one round trip.
func Invalid(problems []FieldError) *errcode.Error {
	e := errcode.Invalid(errcode.InvalidSpec, problems)
	if len(problems) > 1 {
		e.Message = fmt.Sprintf("%d problems in the job spec", len(problems))
	}
	return e
}

// maxProblems bounds an invalid-spec error: a 1 MiB spec can hold a hundred
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
	if list := p.all(); list != nil {
		return Invalid(list)
	}
	return nil
}

// all is every problem kept, and a last one counting those omitted; nil
// when there are none.
func (p *problems) all() []FieldError {
	if len(p.list) == 0 {
		return nil
	}
	list := p.list
	if p.omitted > 0 {
		list = append(list, FieldError{Message: fmt.Sprintf("%d more problems not listed", p.omitted)})
	}
	return list
}

// index builds the path of a list element: index("sweep.requests", 2) is
// "sweep.requests[2]".
func index(field string, i int) string {
	return fmt.Sprintf("%s[%d]", field, i)
}

// AsInvalid finds the invalid-spec error in err's chain, with the
// problems it lists.
func AsInvalid(err error) (*errcode.Error, bool) {
	var e *errcode.Error
	if errors.As(err, &e) && e.Code == errcode.InvalidSpec {
		return e, true
	}
	return nil, false
}
