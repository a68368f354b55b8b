package job

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/abcmd"
)

// RedactedValue stands in for a secret in everything benchq shows of a
// spec: the API's jobs, reports, and messages about a bad ab line.
const RedactedValue = "[redacted]"

// secretHeaderWords make a request header secret when its name contains
// one of them, in any case: Authorization and Proxy-Authorization (auth),
// Cookie and Set-Cookie, X-Api-Key (key), X-Auth-Token, X-Session-Id,
// X-Hub-Signature... A name is matched by substring because a service's own
// credential header can be called anything; hiding a harmless header's
// value costs a reader little, showing a token costs its owner the token.
var secretHeaderWords = [...]string{
	"auth", "cookie", "credential", "key", "passwd", "password",
	"secret", "session", "signature", "token",
}

// secretABFlags are the ab flags whose whole value is a credential: -A
// user:password (Basic auth), -P user:password (proxy auth) and -C
// cookie. An -H value is secret when its header is (SecretHeader).
var secretABFlags = [...]byte{'A', 'P', 'C'}

// SecretHeader reports whether the value of the request header name is a
// secret that benchq must show only as RedactedValue (see
// secretHeaderWords).
func SecretHeader(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretHeaderWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// Redacted returns a copy of s fit to be shown: the values of secret
// request headers (SecretHeader), job-wide and per target, are
// RedactedValue; so are, in ab lines, the values of -A, -P, -C and of
// secret -H headers, the rest of each line kept as written; and target and
// webhook URLs lose their user info (RedactURL). Everything else, names,
// sweep and all, is unchanged, so the copy's points are the spec's. The
// stored spec keeps the real values, which only the worker reads; every
// output (API, reports, CLI through the API) shows this copy. s itself is
// not modified.
func (s Spec) Redacted() Spec {
	s.Request = s.Request.redacted()
	s.Targets = slices.Clone(s.Targets)
	for i := range s.Targets {
		t := &s.Targets[i]
		t.URL = RedactURL(t.URL)
		t.AB = redactABLine(t.AB)
		t.URLs = slices.Clone(t.URLs)
		for k, u := range t.URLs {
			t.URLs[k] = RedactURL(u)
		}
		if t.Request != nil {
			r := t.Request.redacted()
			t.Request = &r
		}
		if t.Monitor != nil {
			m := *t.Monitor
			m.Prometheus = RedactURL(m.Prometheus)
			m.Series = slices.Clone(m.Series)
			t.Monitor = &m
		}
	}
	if s.Webhook != nil {
		w := *s.Webhook
		w.URL = RedactURL(w.URL)
		s.Webhook = &w
	}
	return s
}

// Redacted returns a copy of j whose spec is redacted (Spec.Redacted).
func (j *Job) Redacted() *Job {
	out := *j
	out.Spec = j.Spec.Redacted()
	return &out
}

func (r Request) redacted() Request {
	r.TLS = r.TLS.redacted()
	if len(r.Headers) == 0 {
		return r
	}
	h := make(map[string]string, len(r.Headers))
	for k, v := range r.Headers {
		if SecretHeader(k) {
			v = RedactedValue
		}
		h[k] = v
	}
	r.Headers = h
	return r
}

// abSecret is one secret value in an ab line: which argument holds it,
// the value, and the argument as shown without it.
type abSecret struct {
	word   int
	value  string
	hidden string
}

// abSecrets lists the secret values of ab arguments (see secretABFlags).
// An -H line's name stays and its value goes; a line with no colon is
// hidden whole when what stands for its name is secret.
func abSecrets(args []string) []abSecret {
	var out []abSecret
	for o := range abOptionsOf(args) {
		if o.long != "" || o.word < 0 {
			continue
		}
		prefix := args[o.word][:o.at]
		switch {
		case slices.Contains(secretABFlags[:], o.letter):
			out = append(out, abSecret{o.word, o.value, prefix + RedactedValue})
		case o.letter == 'H':
			name, value, hasColon := strings.Cut(o.value, ":")
			switch {
			case !SecretHeader(name):
			case hasColon:
				out = append(out, abSecret{o.word, value, prefix + name + ": " + RedactedValue})
			default:
				out = append(out, abSecret{o.word, o.value, prefix + RedactedValue})
			}
		}
	}
	return out
}

// redactABLine returns an ab line with its secrets replaced (abSecrets):
// each argument holding one is written anew, quoted as JoinCommandLine
// quotes, and every other byte of the line is kept. A line that does not
// split (never one of a stored spec, which was parsed when submitted) is
// hidden whole, since where its secrets are cannot be told.
func redactABLine(line string) string {
	if line == "" {
		return ""
	}
	words, err := abcmd.SplitCommandLineWords(line)
	if err != nil {
		return RedactedValue
	}
	args := make([]string, len(words))
	for i, w := range words {
		args[i] = w.Text
	}
	var b strings.Builder
	last := 0
	for _, sec := range abSecrets(args) {
		w := words[sec.word]
		b.WriteString(line[last:w.Start])
		b.WriteString(abcmd.JoinCommandLine([]string{sec.hidden})) // quoted: RedactedValue has brackets
		last = w.End
	}
	b.WriteString(line[last:])
	return b.String()
}

// redactABMessage hides, in a message about an ab line, the secret values the
// line carries, as written and as %q quotes them: ab's own messages quote
// what they refuse ("Invalid header line ..."), and a 422 must not show a
// token the client sent.
func redactABMessage(line, msg string) string {
	args, err := abcmd.SplitCommandLine(line)
	if err != nil {
		return msg // the splitter's messages quote nothing of the line
	}
	secrets := abSecrets(args)
	// Longest first, so a secret containing another is hidden whole.
	slices.SortFunc(secrets, func(a, b abSecret) int { return len(b.value) - len(a.value) })
	for _, sec := range secrets {
		v := strings.TrimSpace(sec.value)
		if v == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, v, RedactedValue)
		if q := strconv.Quote(v); q[1:len(q)-1] != v {
			msg = strings.ReplaceAll(msg, q[1:len(q)-1], RedactedValue)
		}
	}
	return msg
}

// RedactURL hides the userinfo of a URL ("http://user:pw@host/" becomes
// "http://xxxxx@host/") and the values of query parameters named like a
// credential ("?access_token=..." becomes "?access_token=xxxxx", by the
// words of SecretHeader) for error messages and shown specs, also in
// strings url.Parse refuses: credentials a client put in a target or
// webhook URL must never come back in a 422, a job or a report (nor in the
// logs). Every package that quotes a client's URL uses it. The rest of the
// URL is kept byte for byte, so what a reader sees is what was sent.
func RedactURL(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = "xxxxx" + rest[at:]
	}
	return prefix + redactQuery(rest)
}

// redactQuery hides the values of the secret-named parameters in the
// query of s (a URL without its scheme), leaving the fragment alone.
func redactQuery(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	query, fragment := s[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, fragment = query[:h], query[h:]
	}
	pairs := strings.Split(query, "&")
	changed := false
	for i, pair := range pairs {
		name, value, ok := strings.Cut(pair, "=")
		if !ok || value == "" {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if SecretHeader(name) {
			pairs[i] = pair[:len(pair)-len(value)] + "xxxxx"
			changed = true
		}
	}
	if !changed {
		return s
	}
	return s[:q+1] + strings.Join(pairs, "&") + fragment
}
