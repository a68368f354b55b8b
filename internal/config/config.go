package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/netguard"
)

// Command is the role a benchq process plays.
type Command string

const (
	// CommandAll runs the API, one worker and, without a Redis URL, its own
	// Redis: a redis-server child keeping its data in DataDir when
	// redis-server is installed, else an embedded in-memory one. It is the
	// development mode.
	CommandAll Command = "all"
	// CommandServe runs the API only; it needs a Redis URL.
	CommandServe Command = "serve"
	// CommandWorker runs a worker only; it needs a Redis URL.
	CommandWorker Command = "worker"
)

// ErrHelp is returned by Load when the arguments ask for --help; the caller
// prints Usage and exits successfully.
var ErrHelp = flag.ErrHelp

// ErrInvalid wraps every configuration problem Load reports.
var ErrInvalid = errors.New("invalid configuration")

// Config is everything a benchq service process needs to start.
type Config struct {
	Command Command

	// Addr is the API's listen address (host:port). Port 0 picks a free one.
	Addr string
	// RedisURL selects the Redis deployment (redis://, rediss://,
	// redis+sentinel://, redis+cluster://, unix://); empty means the
	// all-in-one's own Redis, allowed only for CommandAll.
	RedisURL string
	// DataDir is where the all-in-one's redis-server child keeps its
	// append-only file. Load fills it, when neither flag nor variable
	// sets it, with the XDG default (DefaultDataDir); empty in a Config
	// means no data directory: the embedded in-memory Redis.
	DataDir string
	// Ephemeral makes the all-in-one use the embedded in-memory Redis even
	// where redis-server is installed.
	Ephemeral bool
	// Workers is how many jobs one worker process runs at once. The default
	// is 1: a load generator must not share its CPU with another.
	Workers int
	// Retention is how long finished jobs and their runs are kept.
	Retention time.Duration
	// ShutdownTimeout bounds graceful shutdown after SIGTERM.
	ShutdownTimeout time.Duration
	// JobLease is how long a job's worker may go silent before another
	// worker takes the job over as crashed (worker processes): the worker
	// renews the lease five times within it. CrashRetries is how many
	// such crashes in a row, with no run stored between them, a job is
	// resumed after; the next one fails it. CrashLimit is how many crashes
	// in all it is resumed after, runs stored between them or not.
	JobLease     time.Duration
	CrashRetries int
	CrashLimit   int
	// PollInterval is how often an idle worker looks for a job: the
	// longest a queued job waits for a free worker, against the CPU the
	// polls take from the load generator's core.
	PollInterval time.Duration
	// ShardWait is how long a sharded run (sweep.shards > 1) waits for
	// enough free worker processes to join it; the job then fails saying
	// how many it needed and found.
	ShardWait time.Duration
	// WorkerPool labels the machines a worker runs on; it is part of the
	// testbed stored with each run (job.Testbed.Pool), so runs of pools
	// with different hardware are not compared in a template's history.
	WorkerPool string
	// LogLevel is the minimum level logged.
	LogLevel slog.Level
	// LogFormat is "text" or "json".
	LogFormat string
	// MaxBody is the largest request body the API accepts, in bytes.
	MaxBody int64

	// Job limits; zero keeps the built-in default of internal/job
	// (DefaultLimits). They are the service-wide quota: an API key's quota
	// overrides them field by field.
	MaxConcurrency int
	MaxRequests    int
	MaxRuns        int
	MaxDuration    time.Duration

	// Auth is when a /v1 request of the all-in-one command needs an API
	// key: "auto" (open while no key was ever created and the API listens
	// on loopback only) or "keys" (always). serve always needs keys.
	Auth string
	// MaxActiveJobs (queued + running) and SubmissionsPerMinute are the
	// admission quotas of a key whose own quota leaves them 0.
	MaxActiveJobs        int
	SubmissionsPerMinute int
	// MaxStreamsPerKey and MaxStreams cap the job event streams one API
	// process keeps open at once, per API key and in all; a stream over
	// either is refused with a 429.
	MaxStreamsPerKey int
	MaxStreams       int
	// MaxTemplates, MaxTemplateBytes, MaxSchedules and MaxPins bound what
	// a key whose own quota leaves them 0 may keep stored.
	MaxTemplates     int
	MaxTemplateBytes int
	MaxSchedules     int
	MaxPins          int
	// HookMaxBody caps a CI delivery's body in bytes, checked before any
	// template's secret is.
	HookMaxBody int64

	// HTTP server timeouts; they keep slow or idle clients from holding
	// connections forever (slowloris).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// UnavailableRetryAfter is the Retry-After the API sends with a 503
	// while Redis is unreachable or refusing writes.
	UnavailableRetryAfter time.Duration

	// Webhook delivery (worker processes). WebhookBackoff is the wait
	// before each retry (its length is the number of retries); nil means
	// the built-in day-long schedule of internal/webhook.
	WebhookBackoff     []time.Duration
	WebhookConcurrency int
	WebhookTimeout     time.Duration
	// WebhookPerOwner is how many of a process's WebhookConcurrency
	// deliveries one API key's jobs may have in flight; zero means a
	// quarter of them (at least one).
	WebhookPerOwner int
	// PublicURL is the API's externally reachable base URL
	// ("https://benchq.example"), which webhook payloads link to. The
	// worker building them does not serve the API, so it cannot know it;
	// empty means the all-in-one process's own listen address, and
	// relative links elsewhere. The API answers requests whose Host is
	// its host (see AllowedHosts).
	PublicURL string
	// AllowedHosts are further Host names the API answers (a load
	// balancer's, a cluster-internal service name), "name" for any port
	// or "name:port". Set, or with PublicURL set, every request but the
	// health probes must name the API (its listen address, one of these
	// or PublicURL's host), else 421: what keeps a DNS-rebinding page
	// away. The all-in-one on loopback checks Host even when both are
	// empty, since it may admit requests without a key.
	AllowedHosts []string

	// GitHubAPIURL and GitLabAPIURL are the REST API base URLs that jobs'
	// notify statuses and comments are sent to (worker processes): for
	// GitHub Enterprise Server "https://HOST/api/v3", for a GitLab
	// instance "https://HOST/api/v4". They are the operator's, so they are
	// dialed as given, not through the targets' address policy.
	GitHubAPIURL string
	GitLabAPIURL string
	// GitHubToken and GitLabToken are the service's forge tokens, used
	// for a job whose template keeps none. They come from
	// BENCHQ_GITHUB_TOKEN and BENCHQ_GITLAB_TOKEN only: a flag's value is
	// visible to every user of the host, and a default would be printed
	// by --help.
	GitHubToken Secret
	GitLabToken Secret

	// AllowTargets is the operator allowlist of the address policy: CIDRs
	// and host globs that targets and webhooks may reach although they are
	// private or loopback (internal/netguard reads them). serve and worker
	// admit public addresses plus these; the all-in-one mode admits
	// loopback plus these.
	AllowTargets []string
	// VerifyTargets requires every target host to serve the submitting
	// key's token (internal/targetverify), at submission and before a job's
	// first request.
	VerifyTargets bool
}

// Defaults returns the configuration used when neither a flag nor an
// environment variable says otherwise.
func Defaults() Config {
	return Config{
		Command:           CommandAll,
		Addr:              "127.0.0.1:8080",
		Workers:           1,
		Retention:         720 * time.Hour,
		ShutdownTimeout:   30 * time.Second,
		JobLease:          10 * time.Second,
		CrashRetries:      3,
		CrashLimit:        10,
		PollInterval:      100 * time.Millisecond,
		ShardWait:         time.Minute,
		LogLevel:          slog.LevelInfo,
		LogFormat:         "text",
		MaxBody:           1 << 20,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,

		UnavailableRetryAfter: 5 * time.Second,

		Auth:                 "auto",
		MaxActiveJobs:        10,
		SubmissionsPerMinute: 60,
		MaxStreamsPerKey:     50,
		MaxStreams:           1000,
		MaxTemplates:         100,
		MaxTemplateBytes:     4 << 20,
		MaxSchedules:         50,
		MaxPins:              100,
		HookMaxBody:          1 << 20,

		WebhookConcurrency: 10,
		WebhookTimeout:     10 * time.Second,

		GitHubAPIURL: DefaultGitHubAPIURL,
		GitLabAPIURL: DefaultGitLabAPIURL,
	}
}

// Load parses the command line (without the program name) and the
// environment into a Config. The first argument may name a subcommand
// (serve, worker); otherwise the command is "all". It returns ErrHelp for
// -h/--help, and an error wrapping ErrInvalid for anything it cannot accept.
func Load(args []string, getenv func(string) string) (Config, error) {
	cfg := Defaults()
	cmd, rest := splitCommand(args)
	cfg.Command = cmd
	fs := newFlagSet(&cfg, getenv, io.Discard)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, ErrHelp
		}
		return cfg, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("%w: unexpected argument %q", ErrInvalid, fs.Arg(0))
	}
	if err := fs.envErr(); err != nil {
		return cfg, err
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/") // links append "/v1/..."
	if cfg.Command != CommandServe {                      // the processes that deliver
		cfg.GitHubToken = Secret(strings.TrimSpace(getenv(envGitHubToken)))
		cfg.GitLabToken = Secret(strings.TrimSpace(getenv(envGitLabToken)))
	}
	if cfg.Command == CommandAll && cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir(getenv)
	}
	if err := cfg.validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// DefaultDataDir is the all-in-one's data directory when none is
// configured: $XDG_DATA_HOME/benchq/redis, else
// $HOME/.local/share/benchq/redis (the XDG base directory default), else ""
// (no home: in-memory). A relative XDG_DATA_HOME is ignored, as the XDG
// specification says.
func DefaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "benchq", "redis")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "benchq", "redis")
	}
	return ""
}

// Usage writes the help text of a command: every flag, the environment
// variable behind it and its default.
func Usage(w io.Writer, cmd Command) {
	cfg := Defaults()
	cfg.Command = cmd
	fs := newFlagSet(&cfg, func(string) string { return "" }, w)
	fs.Usage()
}

// IsCommand reports whether name is a service subcommand Load accepts.
func IsCommand(name string) bool {
	return name == string(CommandServe) || name == string(CommandWorker) || name == string(CommandAll)
}

func splitCommand(args []string) (Command, []string) {
	if len(args) > 0 && IsCommand(args[0]) {
		return Command(args[0]), args[1:]
	}
	return CommandAll, args
}

func (c Config) validate() error {
	var problems []string
	if c.RedisURL == "" && c.Command != CommandAll {
		problems = append(problems, fmt.Sprintf("benchq %s needs a Redis URL (--redis-url or BENCHQ_REDIS_URL)", c.Command))
	}
	if c.RedisURL != "" {
		if _, err := ParseRedisURL(c.RedisURL); err != nil {
			problems = append(problems, err.Error())
		}
		if c.Ephemeral {
			problems = append(problems, "ephemeral asks for the embedded in-memory Redis, but a Redis URL is set: give one or the other")
		}
	}
	if c.WebhookConcurrency < 1 {
		problems = append(problems, fmt.Sprintf("webhook-concurrency must be at least 1, got %d", c.WebhookConcurrency))
	}
	if err := checkPublicURL(c.PublicURL); err != nil {
		problems = append(problems, err.Error())
	}
	for _, u := range []struct{ name, url string }{{"github-api-url", c.GitHubAPIURL}, {"gitlab-api-url", c.GitLabAPIURL}} {
		if err := checkAPIURL(u.name, u.url); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := checkAllowedHosts(c.AllowedHosts); err != nil {
		problems = append(problems, err.Error())
	}
	if c.Workers < 1 {
		problems = append(problems, fmt.Sprintf("workers must be at least 1, got %d", c.Workers))
	}
	if c.JobLease < time.Second {
		problems = append(problems, fmt.Sprintf("job-lease must be at least 1s, got %s", c.JobLease))
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"crash-retries", int64(c.CrashRetries)}, {"crash-limit", int64(c.CrashLimit)},
		{"webhook-per-owner", int64(c.WebhookPerOwner)},
		{"max-concurrency", int64(c.MaxConcurrency)}, {"max-requests", int64(c.MaxRequests)},
		{"max-runs", int64(c.MaxRuns)}, {"max-duration", int64(c.MaxDuration)},
	} {
		if n.v < 0 {
			problems = append(problems, fmt.Sprintf("%s must not be negative, got %d", n.name, n.v))
		}
	}
	if _, err := netguard.New(c.AllowTargets); err != nil {
		problems = append(problems, "allow-targets: "+err.Error())
	}
	if c.Auth != "auto" && c.Auth != "keys" {
		problems = append(problems, fmt.Sprintf("auth must be auto or keys, got %q", c.Auth))
	}
	if c.MaxActiveJobs < 1 || c.SubmissionsPerMinute < 1 {
		problems = append(problems, fmt.Sprintf("max-active-jobs and submissions-per-minute must be at least 1, got %d and %d", c.MaxActiveJobs, c.SubmissionsPerMinute))
	}
	if c.MaxStreamsPerKey < 1 || c.MaxStreams < 1 {
		problems = append(problems, fmt.Sprintf("max-streams-per-key and max-streams must be at least 1, got %d and %d", c.MaxStreamsPerKey, c.MaxStreams))
	}
	if c.MaxTemplates < 1 || c.MaxTemplateBytes < 1 || c.MaxSchedules < 1 || c.MaxPins < 1 {
		problems = append(problems, fmt.Sprintf("max-templates, max-template-bytes, max-schedules and max-pins must be at least 1, got %d, %d, %d and %d",
			c.MaxTemplates, c.MaxTemplateBytes, c.MaxSchedules, c.MaxPins))
	}
	if c.HookMaxBody < 1 {
		problems = append(problems, fmt.Sprintf("hook-max-body must be positive, got %d", c.HookMaxBody))
	}
	if c.MaxBody < 1 {
		problems = append(problems, fmt.Sprintf("max-body must be positive, got %d", c.MaxBody))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		problems = append(problems, fmt.Sprintf("log-format must be text or json, got %q", c.LogFormat))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"retention", c.Retention}, {"shutdown-timeout", c.ShutdownTimeout},
		{"read-header-timeout", c.ReadHeaderTimeout}, {"read-timeout", c.ReadTimeout},
		{"write-timeout", c.WriteTimeout}, {"idle-timeout", c.IdleTimeout},
		{"webhook-timeout", c.WebhookTimeout}, {"unavailable-retry-after", c.UnavailableRetryAfter},
		{"shard-wait", c.ShardWait}, {"poll-interval", c.PollInterval},
	} {
		if d.d <= 0 {
			problems = append(problems, fmt.Sprintf("%s must be positive, got %s", d.name, d.d))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
}

// checkPublicURL accepts "" or an absolute http(s) URL with a host and
// nothing after its path, since webhook links are built by appending to it.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("public-url must be an absolute http(s) URL such as https://benchq.example, got %q", s)
	}
	return nil
}

// checkAPIURL accepts an absolute http(s) URL with a host and no user
// info, query or fragment: API paths are appended to it.
func checkAPIURL(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%s must be an absolute http(s) URL such as https://api.github.com/, got %q", name, s)
	}
	return nil
}

// checkAllowedHosts accepts host names and IP addresses, each with an
// optional port: what a Host header carries, nothing a URL adds around it.
func checkAllowedHosts(hosts []string) error {
	for _, h := range hosts {
		name := h
		if host, port, err := net.SplitHostPort(h); err == nil {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("allowed-hosts: %q has a port that is not 1-65535", h)
			}
			name = host
		} else if inner, ok := strings.CutPrefix(h, "["); ok && strings.HasSuffix(inner, "]") {
			name = strings.TrimSuffix(inner, "]") // an IPv6 address without a port
		}
		if name == "" || strings.ContainsAny(name, "/@?#*[] \t") {
			return fmt.Errorf("allowed-hosts: %q is not a host name or host:port (no scheme, path or wildcard)", h)
		}
	}
	return nil
}
