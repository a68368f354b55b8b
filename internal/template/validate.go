package template

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/benchq/benchq/internal/job"
)

// ErrNoTrigger is returned by a lookup that finds no template for an event.
var ErrNoTrigger = errors.New("template: no template triggers on this event")

var (
	nameRe  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	valueRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
	// repoRe is a GitHub full name or a GitLab path with namespace.
	repoRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$`)
)

// Secret lengths: GitHub and GitLab take any string, but a short one is
// guessable, and anyone who guesses it can start load on the owner's
// targets.
const (
	minSecretLen = 16
	maxSecretLen = 256
	maxBranches  = 32
	maxValues    = 32
)

// ValidName reports whether name may name a template (and so a key part
// and a URL path segment).
func ValidName(name string) bool { return nameRe.MatchString(name) }

// Validate checks what the store keeps: the name, the declared values,
// that every placeholder of the spec is known and well formed, and the
// triggers. The spec itself is checked per run, once rendered (Render),
// as every job's is; the schedule is the scheduler's to check. Problems
// come back at once as a *errcode.Error naming each field.
func (t Template) Validate() error {
	var probs []job.FieldError
	add := func(field, format string, args ...any) {
		probs = append(probs, job.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !ValidName(t.Name) {
		add("name", "want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if len(t.Values) > maxValues {
		add("values", "%d values exceed the limit of %d", len(t.Values), maxValues)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Values)) {
		switch {
		case !valueRe.MatchString(k):
			add("values."+k, "a placeholder name is letters, digits and '_', not starting with a digit")
		case len(t.Values[k]) > maxValueLen || strings.ContainsFunc(t.Values[k], isControl):
			add("values."+k, "a default is at most %d printable bytes", maxValueLen)
		}
	}
	known := map[string]string{}
	for _, b := range Builtins() {
		known[b] = "x"
	}
	for k := range t.Values {
		known[k] = "x"
	}
	raw, err := specTree(t.Spec)
	if err != nil {
		return err
	}
	r := renderer{vals: known, check: true}
	r.walk("spec", raw)
	probs = append(probs, r.problems...)
	if len(t.Spec.Targets) == 0 {
		add("spec.targets", "at least one target is required")
	}
	if g := t.Triggers.GitHub; g != nil {
		probs = append(probs, checkTrigger("triggers.github", "repository", g.Repository, g.Branches, "secret", g.Secret)...)
		probs = append(probs, checkAPIToken("triggers.github.api_token", g.APIToken)...)
	}
	if g := t.Triggers.GitLab; g != nil {
		probs = append(probs, checkTrigger("triggers.gitlab", "project", g.Project, g.Branches, "token", g.Token)...)
		probs = append(probs, checkAPIToken("triggers.gitlab.api_token", g.APIToken)...)
	}
	if len(probs) > 0 {
		return job.Invalid(probs)
	}
	return nil
}

func checkTrigger(at, repoField, repo string, branches []string, secretField, secret string) []job.FieldError {
	var probs []job.FieldError
	add := func(field, format string, args ...any) {
		probs = append(probs, job.FieldError{Field: at + "." + field, Message: fmt.Sprintf(format, args...)})
	}
	if !repoRe.MatchString(repo) || len(repo) > 255 {
		add(repoField, "want the repository's full path, \"owner/name\"")
	}
	if len(branches) > maxBranches {
		add("branches", "%d branches exceed the limit of %d", len(branches), maxBranches)
	}
	for i, b := range branches {
		if b == "" || len(b) > 255 || strings.ContainsFunc(b, isControl) || !validPattern(b) {
			add(fmt.Sprintf("branches[%d]", i), "want a branch name or a path.Match pattern")
		}
	}
	// The message names lengths only: a secret is never repeated.
	if len(secret) < minSecretLen || len(secret) > maxSecretLen {
		add(secretField, "required: %d to %d bytes", minSecretLen, maxSecretLen)
	}
	return probs
}

// maxAPITokenLen bounds a forge API token: GitHub's and GitLab's are
// well under it.
const maxAPITokenLen = 512

// checkAPIToken checks a forge API token's form (it is sent in a header):
// printable, no blanks. The message names lengths only.
func checkAPIToken(field, token string) []job.FieldError {
	bad := len(token) > maxAPITokenLen || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f })
	if !bad {
		return nil
	}
	return []job.FieldError{{Field: field, Message: fmt.Sprintf("want at most %d printable characters without blanks", maxAPITokenLen)}}
}

func validPattern(p string) bool {
	_, err := matchPattern(p, "")
	return err == nil
}
