package monitor

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// ErrBadSelector is wrapped by every error ParseSelector returns.
var ErrBadSelector = errors.New("monitor: bad selector")

// maxSelectorLen bounds a selector as written; a longer one is refused
// before it is parsed.
const maxSelectorLen = 1024

// MatchOp is a label matcher's operator, as in PromQL.
type MatchOp string

// The four matchers of a PromQL instant selector.
const (
	MatchEqual     MatchOp = "="
	MatchNotEqual  MatchOp = "!="
	MatchRegexp    MatchOp = "=~"
	MatchNotRegexp MatchOp = "!~"
)

// Matcher is one label matcher: Label Op "Value". A regular expression is
// anchored at both ends, as PromQL anchors it.
type Matcher struct {
	Label string
	Op    MatchOp
	Value string
	re    *regexp.Regexp
}

// Selector names series: a metric name and label matchers, e.g.
// node_cpu_seconds_total{cpu="0",mode!="idle"}. A selector's value in one
// scrape is the sum of every series it matches.
type Selector struct {
	Name     string
	Matchers []Matcher
}

// ParseSelector reads a selector as PromQL writes one: a metric name,
// then optionally braces holding comma-separated matchers whose values
// are double-quoted Go strings (or single-quoted without escapes).
func ParseSelector(s string) (Selector, error) {
	if len(s) > maxSelectorLen {
		return Selector{}, fmt.Errorf("%w: longer than %d bytes", ErrBadSelector, maxSelectorLen)
	}
	p := &selectorParser{in: strings.TrimSpace(s)}
	sel, err := p.parse()
	if err != nil {
		return Selector{}, fmt.Errorf("%w: %w", ErrBadSelector, err)
	}
	return sel, nil
}

type selectorParser struct {
	in  string
	pos int
}

func (p *selectorParser) parse() (Selector, error) {
	name := p.ident(true)
	if name == "" {
		return Selector{}, p.errorf("want a metric name")
	}
	sel := Selector{Name: name}
	p.space()
	if p.eof() {
		return sel, nil
	}
	if !p.take("{") {
		return Selector{}, p.errorf("want '{' or the end after the metric name")
	}
	for {
		p.space()
		if p.take("}") {
			break
		}
		m, err := p.matcher()
		if err != nil {
			return Selector{}, err
		}
		sel.Matchers = append(sel.Matchers, m)
		p.space()
		if p.take(",") {
			continue
		}
		if !p.take("}") {
			return Selector{}, p.errorf("want ',' or '}' after a matcher")
		}
		break
	}
	p.space()
	if !p.eof() {
		return Selector{}, p.errorf("unexpected text after '}'")
	}
	return sel, nil
}

func (p *selectorParser) matcher() (Matcher, error) {
	label := p.ident(false)
	if label == "" {
		return Matcher{}, p.errorf("want a label name")
	}
	p.space()
	var op MatchOp
	for _, o := range []MatchOp{MatchRegexp, MatchNotRegexp, MatchNotEqual, MatchEqual} {
		if p.take(string(o)) {
			op = o
			break
		}
	}
	if op == "" {
		return Matcher{}, p.errorf("want one of = != =~ !~ after label %q", label)
	}
	p.space()
	val, err := p.quoted()
	if err != nil {
		return Matcher{}, err
	}
	m := Matcher{Label: label, Op: op, Value: val}
	if op == MatchRegexp || op == MatchNotRegexp {
		re, err := compileMatcher(val)
		if err != nil {
			return Matcher{}, fmt.Errorf("label %q: %w", label, err)
		}
		m.re = re
	}
	return m, nil
}

// maxRegexpSize bounds a matcher's regular expression once its counted
// repetitions are expanded (a{1000} is a thousand a's): compiling a 1 KB
// selector of a{1000}s took 40 MB and 80 ms, which a spec of many
// targets would turn into minutes of the API's CPU. Label values are
// short; a matcher needs a few hundred at most.
const maxRegexpSize = 4096

// compileMatcher checks the expanded size of a matcher's expression
// before compiling it, anchored as PromQL anchors it.
func compileMatcher(val string) (*regexp.Regexp, error) {
	tree, err := syntax.Parse(val, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%q is not a regular expression: %w", val, err)
	}
	if expandedSize(tree) > maxRegexpSize {
		return nil, fmt.Errorf("%q expands to more than %d instructions: repeat less", val, maxRegexpSize)
	}
	re, err := regexp.Compile("^(?:" + val + ")$")
	if err != nil {
		return nil, fmt.Errorf("%q is not a regular expression: %w", val, err)
	}
	return re, nil
}

// expandedSize estimates the instructions re compiles to, each counted
// repetition multiplying its operand; it saturates rather than overflow.
func expandedSize(re *syntax.Regexp) int {
	n := 1 + len(re.Rune)
	for _, sub := range re.Sub {
		n += expandedSize(sub)
	}
	if re.Op == syntax.OpRepeat {
		n *= max(re.Max, re.Min, 1)
	}
	return min(n, 1<<30)
}

// ident reads a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or, without
// colons, a label name.
func (p *selectorParser) ident(colons bool) string {
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			(p.pos > start && c >= '0' && c <= '9') || (colons && c == ':')
		if !ok {
			break
		}
		p.pos++
	}
	return p.in[start:p.pos]
}

func (p *selectorParser) quoted() (string, error) {
	if p.eof() || (p.in[p.pos] != '"' && p.in[p.pos] != '\'') {
		return "", p.errorf("want a quoted value")
	}
	q := p.in[p.pos]
	for i := p.pos + 1; i < len(p.in); i++ {
		switch p.in[i] {
		case '\\':
			if q == '\'' {
				return "", p.errorf("a single-quoted value cannot hold escapes")
			}
			i++
		case q:
			raw := p.in[p.pos : i+1]
			p.pos = i + 1
			if q == '\'' {
				return raw[1 : len(raw)-1], nil
			}
			s, err := strconv.Unquote(raw)
			if err != nil {
				return "", fmt.Errorf("%s is not a valid quoted string", raw)
			}
			return s, nil
		}
	}
	return "", p.errorf("unterminated quoted value")
}

func (p *selectorParser) space() {
	for p.pos < len(p.in) && (p.in[p.pos] == ' ' || p.in[p.pos] == '\t') {
		p.pos++
	}
}

func (p *selectorParser) take(s string) bool {
	if strings.HasPrefix(p.in[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *selectorParser) eof() bool { return p.pos >= len(p.in) }

func (p *selectorParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// String writes the selector back in PromQL syntax.
func (s Selector) String() string {
	if len(s.Matchers) == 0 {
		return s.Name
	}
	parts := make([]string, len(s.Matchers))
	for i, m := range s.Matchers {
		parts[i] = m.Label + string(m.Op) + strconv.Quote(m.Value)
	}
	return s.Name + "{" + strings.Join(parts, ",") + "}"
}

// matches says whether a series' labels satisfy every matcher. A label
// the series lacks has the empty value, as in PromQL.
func (s Selector) matches(labels []*dto.LabelPair) bool {
	for _, m := range s.Matchers {
		v := ""
		for _, l := range labels {
			if l.GetName() == m.Label {
				v = l.GetValue()
				break
			}
		}
		var ok bool
		switch m.Op {
		case MatchEqual:
			ok = v == m.Value
		case MatchNotEqual:
			ok = v != m.Value
		case MatchRegexp:
			ok = m.re.MatchString(v)
		case MatchNotRegexp:
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	return true
}
