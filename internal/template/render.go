package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/benchq/benchq/internal/job"
)

// The placeholders every template may use, filled by the triggers (and by
// whoever runs a template by hand).
const (
	Commit    = "commit"
	Branch    = "branch"
	TargetURL = "target_url"
	PR        = "pr"
	Repo      = "repo"
)

// Builtins lists the built-in placeholders.
func Builtins() []string { return []string{Commit, Branch, TargetURL, PR, Repo} }

func isBuiltin(name string) bool {
	for _, b := range Builtins() {
		if b == name {
			return true
		}
	}
	return false
}

// placeholder is {{name}}, spaces allowed inside the braces.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// maxValueLen bounds one value: a value ends up in a label (255) at most,
// or in a URL, and no commit, branch or URL is longer.
const maxValueLen = 2048

// Render returns the job spec of one run of t: every placeholder replaced
// by its value from values, else t.Values' default. A value is escaped
// for where it lands, so that it cannot change what the spec means beyond
// its own place: inside a URL (or a URL in a command line) it is
// percent-encoded as one component, so it adds no scheme, user, host,
// port, path separator, query or fragment; a placeholder that begins a
// URL or a command-line word ("{{target_url}}/health") takes the value as
// it is, since it gives the scheme and host, and such a value may not
// contain blanks or quotes or start with '-'. The result is
// decoded as strictly as a submitted spec; the caller still applies
// defaults, job validation and the address policy to it, as to any job.
//
// Errors are *errcode.Error naming the field: "values.<name>" for
// a value nobody declared or a bad one, the spec path ("spec.targets[0].url")
// for a placeholder without a value.
func (t Template) Render(values map[string]string) (job.Spec, error) {
	vals, err := t.merge(values)
	if err != nil {
		return job.Spec{}, err
	}
	raw, err := specTree(t.Spec)
	if err != nil {
		return job.Spec{}, err
	}
	r := renderer{vals: vals}
	out := r.walk("spec", raw)
	if len(r.problems) > 0 {
		return job.Spec{}, job.Invalid(r.problems)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return job.Spec{}, fmt.Errorf("template %s: encode rendered spec: %w", t.Name, err)
	}
	spec, err := job.Decode(bytes.NewReader(data))
	if err != nil {
		return job.Spec{}, prefixFields(err, "spec")
	}
	return spec, nil
}

// merge overlays values on the declared defaults, refusing values for
// names the template does not declare and values that are not text.
func (t Template) merge(values map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(t.Values)+len(values))
	for k, v := range t.Values {
		out[k] = v
	}
	var probs []job.FieldError
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := values[k]
		field := "values." + k
		switch {
		case !isBuiltin(k) && !hasKey(t.Values, k):
			msg := fmt.Sprintf("the template declares no placeholder {{%s}}", k)
			if meant, ok := job.Suggest(k, append(Builtins(), slices.Sorted(maps.Keys(t.Values))...)); ok {
				msg += fmt.Sprintf("; did you mean {{%s}}?", meant)
			} else {
				msg += fmt.Sprintf(" (built in: %s; declare others in values)", strings.Join(Builtins(), ", "))
			}
			probs = append(probs, job.FieldError{Field: field, Message: msg})
		case len(v) > maxValueLen:
			probs = append(probs, job.FieldError{Field: field, Message: fmt.Sprintf("at most %d bytes", maxValueLen)})
		case strings.IndexFunc(v, unicode.IsControl) >= 0:
			probs = append(probs, job.FieldError{Field: field, Message: "control characters are not allowed"})
		default:
			out[k] = v
		}
	}
	if len(probs) > 0 {
		return nil, job.Invalid(probs)
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// specTree is spec as generic JSON values, numbers kept as written.
func specTree(spec job.Spec) (any, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("template: encode spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("template: decode spec: %w", err)
	}
	return raw, nil
}

// renderer replaces placeholders in every string of a spec tree.
type renderer struct {
	vals map[string]string
	// check, set, only reports placeholders without a value (Validate).
	check    bool
	problems []job.FieldError
}

func (r *renderer) walk(path string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			v[k] = r.walk(path+"."+k, v[k])
		}
		return v
	case []any:
		for i := range v {
			v[i] = r.walk(fmt.Sprintf("%s[%d]", path, i), v[i])
		}
		return v
	case string:
		return r.text(path, v)
	}
	return v
}

// landing is where a string of the spec goes, which decides how a value
// inside it is escaped.
type landing int

const (
	plainText   landing = iota // a label, a name, a header value, a body
	urlText                    // a target or webhook URL
	commandLine                // an ab or http_load line
)

var (
	urlPath  = regexp.MustCompile(`^spec\.(targets\[\d+\]\.(url|urls\[\d+\])|webhook\.url)$`)
	linePath = regexp.MustCompile(`^spec\.targets\[\d+\]\.(ab|http_load)$`)
)

func landingOf(path string) landing {
	switch {
	case urlPath.MatchString(path):
		return urlText
	case linePath.MatchString(path):
		return commandLine
	}
	return plainText
}

func (r *renderer) text(path, s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	where := landingOf(path)
	locs := placeholder.FindAllStringSubmatchIndex(s, -1)
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		name := s[loc[2]:loc[3]]
		b.WriteString(s[last:loc[0]])
		last = loc[1]
		v, ok := r.vals[name]
		if !ok || v == "" && !r.check {
			r.problems = append(r.problems, job.FieldError{Field: path, Message: missingMessage(name, ok)})
			continue
		}
		if r.check {
			continue
		}
		// A placeholder that begins a URL, or a word of a command line,
		// gives the URL's scheme and host: it takes the value as is.
		leads := loc[0] == 0 || where == commandLine && wordStart(s, loc[0])
		switch {
		case where == plainText:
			b.WriteString(v)
		case leads:
			if strings.ContainsAny(v, " \t\"'\\`") || strings.HasPrefix(v, "-") {
				r.problems = append(r.problems, job.FieldError{Field: "values." + name,
					Message: fmt.Sprintf("{{%s}} begins a URL or a word of %s, so its value may not contain blanks, quotes or backslashes nor start with '-'", name, path)})
				continue
			}
			b.WriteString(v)
		default:
			b.WriteString(escapeComponent(v))
		}
	}
	b.WriteString(s[last:])
	out := b.String()
	if rest := strings.Index(placeholder.ReplaceAllString(s, ""), "{{"); rest >= 0 {
		r.problems = append(r.problems, job.FieldError{Field: path, Message: "malformed placeholder: write {{name}}, a name of letters, digits and '_'"})
	}
	return out
}

func missingMessage(name string, declared bool) string {
	if !declared && !isBuiltin(name) {
		return fmt.Sprintf("unknown placeholder {{%s}}: built in are %s; declare others in values", name, strings.Join(Builtins(), ", "))
	}
	return fmt.Sprintf("placeholder {{%s}} has no value: give values.%s", name, name)
}

// wordStart reports whether a blank-separated word of s starts at i.
func wordStart(s string, i int) bool { return i == 0 || s[i-1] == ' ' || s[i-1] == '\t' }

// escapeComponent percent-encodes every byte of v that could end or
// restructure a URL component ("/", "?", "#", "@", ":", "&", "=", "+",
// blanks, quotes).
func escapeComponent(v string) string {
	return strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
}

// Placeholders lists the placeholder names t's spec uses, sorted.
func (t Template) Placeholders() ([]string, error) {
	raw, err := specTree(t.Spec)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				collect(x)
			}
		case []any:
			for _, x := range v {
				collect(x)
			}
		case string:
			for _, m := range placeholder.FindAllStringSubmatch(v, -1) {
				seen[m[1]] = true
			}
		}
	}
	collect(raw)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// prefixFields puts prefix before every field of a *errcode.Error.
func prefixFields(err error, prefix string) error {
	ve, ok := job.AsInvalid(err)
	if !ok {
		return err
	}
	out := make([]job.FieldError, len(ve.Problems))
	for i, p := range ve.Problems {
		if p.Field == "" {
			p.Field = prefix
		} else {
			p.Field = prefix + "." + p.Field
		}
		out[i] = p
	}
	return job.Invalid(out)
}
