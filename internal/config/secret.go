package config

import "log/slog"

// The variables the service's forge tokens are read from; no flag
// carries them.
const (
	envGitHubToken = "BENCHQ_GITHUB_TOKEN"
	envGitLabToken = "BENCHQ_GITLAB_TOKEN"
)

// The forges' public REST APIs, the default API URLs.
const (
	DefaultGitHubAPIURL = "https://api.github.com/"
	DefaultGitLabAPIURL = "https://gitlab.com/api/v4/"
)

// redacted is how a set Secret prints.
const redacted = "[redacted]"

// Secret is a credential from the environment. However a Config is
// printed, logged or marshalled, it shows "[redacted]" (or nothing, when
// unset); Reveal is the one way to its value, for the client that sends
// it.
type Secret string

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// String is "[redacted]", or "" when unset.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return s.String() }

// LogValue keeps slog from printing the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders (JSON, YAML) from writing the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
