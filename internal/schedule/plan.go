package schedule

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/template"
)

// Missed-run policies: what a scheduler does with ticks that passed while
// no scheduler ran.
const (
	// MissedSkip (the default) records them and runs the next tick.
	MissedSkip = "skip"
	// MissedRunOnce runs once at once for all of them.
	MissedRunOnce = "run_once"
)

// parser reads the standard 5-field expressions (minute hour dom month
// dow) and the descriptors (@hourly, @daily...); no seconds field, so no
// schedule fires more than once a minute.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Plan is a validated schedule.
type Plan struct {
	sched    cron.Schedule
	loc      *time.Location
	jitter   time.Duration
	Missed   string
	Paused   bool
	interval time.Duration
}

// Parse validates s, naming each bad field ("schedule.cron",
// "schedule.timezone", ...) in a *errcode.Error.
func Parse(s template.Schedule) (*Plan, error) {
	var probs []job.FieldError
	add := func(field, format string, args ...any) {
		probs = append(probs, job.FieldError{Field: "schedule." + field, Message: fmt.Sprintf(format, args...)})
	}
	p := &Plan{Missed: s.Missed, Paused: s.Paused, jitter: time.Duration(s.Jitter)}
	sched, err := parser.Parse(s.Cron)
	switch {
	case s.Cron == "":
		add("cron", "required: a 5-field cron expression such as \"*/15 * * * *\"")
	case err != nil:
		add("cron", "not a 5-field cron expression (minute hour day-of-month month day-of-week): %v", err)
	case strings.HasPrefix(s.Cron, "@every"):
		add("cron", "@every is not a calendar schedule: write it as a 5-field expression")
	}
	p.sched = sched
	p.loc = time.UTC
	if s.Timezone != "" {
		loc, err := time.LoadLocation(s.Timezone)
		if err != nil || s.Timezone == "Local" {
			add("timezone", "%q is not an IANA time zone such as \"Europe/Berlin\"", s.Timezone)
		} else {
			p.loc = loc
		}
	}
	switch p.Missed {
	case "":
		p.Missed = MissedSkip
	case MissedSkip, MissedRunOnce:
	default:
		add("missed", "unknown policy %q: want %q or %q", s.Missed, MissedSkip, MissedRunOnce)
	}
	if len(probs) == 0 {
		p.interval = p.shortestInterval()
		if p.jitter < 0 || p.jitter > p.interval {
			add("jitter", "want 0 to the schedule's shortest interval, %s", p.interval)
		}
	}
	if len(probs) > 0 {
		return nil, job.Invalid(probs)
	}
	return p, nil
}

// Validate is Parse for a template's optional schedule being created or
// changed, and stricter: the cron names no time zone of its own
// (robfig/cron reads a "CRON_TZ=" or "TZ=" prefix, which would override
// schedule.timezone without showing in it), and it fires within a year.
// Parse alone reads what is stored, so a schedule saved before these rules
// keeps running.
func Validate(s *template.Schedule) error {
	if s == nil {
		return nil
	}
	p, err := Parse(*s)
	ve, _ := job.AsInvalid(err)
	if err != nil && ve == nil {
		return err
	}
	var probs []job.FieldError
	if ve != nil {
		probs = ve.Problems
	}
	cron := strings.TrimSpace(s.Cron)
	switch {
	case strings.HasPrefix(cron, "CRON_TZ=") || strings.HasPrefix(cron, "TZ="):
		probs = append(probs, job.FieldError{Field: "schedule.cron", Message: "a time zone prefix (CRON_TZ=, TZ=) is not allowed: set schedule.timezone"})
	case p != nil && !p.firesWithinAYear():
		probs = append(probs, job.FieldError{Field: "schedule.cron", Message: fmt.Sprintf("%q never fires within a year (such as the 30th of February)", s.Cron)})
	}
	if len(probs) > 0 {
		return job.Invalid(probs)
	}
	return nil
}

// firesWithinAYear reports whether the schedule has a tick within a year
// of a fixed instant. A cron's ticks repeat every year, the 29th of
// February's aside, so one year from any instant tells whether it fires
// at all; a fixed one keeps the answer the same on every day.
func (p *Plan) firesWithinAYear() bool {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, p.loc)
	next := p.sched.Next(from)
	return !next.IsZero() && next.Before(from.AddDate(1, 0, 1))
}

// shortestInterval is the shortest gap between ticks over the next year's
// first few hundred, which bounds the jitter: a jitter longer than the
// gap would fire ticks out of order.
func (p *Plan) shortestInterval() time.Duration {
	t := p.sched.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, p.loc))
	best := time.Duration(1<<63 - 1)
	for range 400 {
		n := p.sched.Next(t)
		if n.IsZero() {
			break
		}
		best = min(best, n.Sub(t))
		t = n
	}
	return best
}

// Next is the first tick after t (zero when the expression never fires,
// such as "0 0 30 2 *").
func (p *Plan) Next(t time.Time) time.Time { return p.sched.Next(t.In(p.loc)) }

// FireAt is when tick fires for the schedule named ref: the tick plus a
// jitter (whole seconds) every scheduler computes alike from ref and the tick, so the
// same tick fires at the same moment wherever it is evaluated.
func (p *Plan) FireAt(ref string, tick time.Time) time.Time {
	if p.jitter <= 0 {
		return tick
	}
	h := fnv.New64a()
	h.Write([]byte(ref + "@" + strconv.FormatInt(tick.Unix(), 10)))
	secs := uint64(p.jitter/time.Second) + 1
	return tick.Add(time.Duration(h.Sum64()%secs) * time.Second)
}

// NextRun is when the schedule named ref fires next after now.
func (p *Plan) NextRun(ref string, now time.Time) time.Time {
	t := p.Next(now.Add(-p.jitter))
	for !t.IsZero() && !p.FireAt(ref, t).After(now) {
		t = p.Next(t)
	}
	if t.IsZero() {
		return t
	}
	return p.FireAt(ref, t)
}
