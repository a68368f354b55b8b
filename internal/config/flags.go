package config

import (
	"encoding"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// flagSet is a flag.FlagSet whose defaults come from BENCHQ_* variables. A
// variable that does not parse is remembered and reported after flag
// parsing, so a flag given on the command line still wins over a bad
// variable only if the user fixed it there.
type flagSet struct {
	*flag.FlagSet
	getenv  func(string) string
	envs    map[string]string // flag name -> variable
	envErrs map[string]string // flag name -> problem
}

func newFlagSet(cfg *Config, getenv func(string) string, out io.Writer) *flagSet {
	name := "benchq"
	if cfg.Command != CommandAll {
		name += " " + string(cfg.Command)
	}
	fs := &flagSet{
		FlagSet: flag.NewFlagSet(name, flag.ContinueOnError),
		getenv:  getenv,
		envs:    map[string]string{},
		envErrs: map[string]string{},
	}
	fs.SetOutput(out)
	fs.Usage = func() { fs.usage(out, cfg.Command) }
	fs.define(cfg)
	return fs
}

// define declares every flag. The worker's process has no API, so it does
// not offer the API's flags (a typo there is then an error, not a no-op).
func (fs *flagSet) define(cfg *Config) {
	fs.str(&cfg.RedisURL, "redis-url", "BENCHQ_REDIS_URL", "Redis URL: redis://, rediss://, redis+sentinel://, redis+cluster://, unix:// (empty, all-in-one only: its own Redis, see --data-dir)")
	if cfg.Command == CommandAll {
		fs.str(&cfg.DataDir, "data-dir", "BENCHQ_DATA_DIR", "where the all-in-one keeps jobs, results and API keys: a redis-server child (when redis-server is on PATH) writes its append-only file here and listens on redis.sock here; one benchq per directory (empty: $XDG_DATA_HOME/benchq/redis, else ~/.local/share/benchq/redis)")
		fs.boolean(&cfg.Ephemeral, "ephemeral", "BENCHQ_EPHEMERAL", "use an embedded in-memory Redis even if redis-server is installed: nothing is kept after exit")
	}
	if cfg.Command != CommandWorker {
		fs.str(&cfg.Addr, "addr", "BENCHQ_ADDR", "API listen address")
		fs.int64(&cfg.MaxBody, "max-body", "BENCHQ_MAX_BODY", "largest accepted request body in bytes")
		fs.duration(&cfg.ReadHeaderTimeout, "read-header-timeout", "BENCHQ_READ_HEADER_TIMEOUT", "time allowed to read request headers")
		fs.duration(&cfg.ReadTimeout, "read-timeout", "BENCHQ_READ_TIMEOUT", "time allowed to read a whole request")
		fs.duration(&cfg.WriteTimeout, "write-timeout", "BENCHQ_WRITE_TIMEOUT", "time allowed to write a response (event streams excepted)")
		fs.duration(&cfg.IdleTimeout, "idle-timeout", "BENCHQ_IDLE_TIMEOUT", "keep-alive idle connection timeout")
		fs.duration(&cfg.UnavailableRetryAfter, "unavailable-retry-after", "BENCHQ_UNAVAILABLE_RETRY_AFTER", "Retry-After of the 503 the API answers while Redis is unreachable or refusing writes")
		fs.integer(&cfg.MaxConcurrency, "max-concurrency", "BENCHQ_MAX_CONCURRENCY", "largest concurrency a job may ask for (0: built-in 10000)")
		fs.integer(&cfg.MaxRequests, "max-requests", "BENCHQ_MAX_REQUESTS", "largest request count of one run (0: built-in 10000000)")
		fs.integer(&cfg.MaxRuns, "max-runs", "BENCHQ_MAX_RUNS", "most runs (points x repeats) in one job (0: built-in 1000)")
		fs.duration(&cfg.MaxDuration, "max-duration", "BENCHQ_MAX_DURATION", "longest run duration; a request timeout may be up to the larger of this and 30s (0: built-in 1h)")
		if cfg.Command == CommandAll {
			fs.str(&cfg.Auth, "auth", "BENCHQ_AUTH", "API keys: auto (none needed on a loopback listener until the first key is created) or keys (always); serve always needs keys")
		}
		fs.integer(&cfg.MaxActiveJobs, "max-active-jobs", "BENCHQ_MAX_ACTIVE_JOBS", "queued + running jobs one API key may have (its own quota may override)")
		fs.integer(&cfg.SubmissionsPerMinute, "submissions-per-minute", "BENCHQ_SUBMISSIONS_PER_MINUTE", "job submissions one API key may make per minute, shared by all API replicas")
		fs.integer(&cfg.MaxStreamsPerKey, "max-streams-per-key", "BENCHQ_MAX_STREAMS_PER_KEY", "event streams one API key may have open at once on this API process (beyond: 429)")
		fs.integer(&cfg.MaxStreams, "max-streams", "BENCHQ_MAX_STREAMS", "event streams this API process keeps open at once, all keys together (beyond: 429)")
		fs.integer(&cfg.MaxTemplates, "max-templates", "BENCHQ_MAX_TEMPLATES", "templates one API key may keep (its own quota may override)")
		fs.integer(&cfg.MaxTemplateBytes, "max-template-bytes", "BENCHQ_MAX_TEMPLATE_BYTES", "bytes one API key's templates may take together (its own quota may override)")
		fs.integer(&cfg.MaxSchedules, "max-schedules", "BENCHQ_MAX_SCHEDULES", "templates with a schedule one API key may keep (its own quota may override)")
		fs.integer(&cfg.MaxPins, "max-pins", "BENCHQ_MAX_PINS", "jobs one API key may keep pinned (its own quota may override)")
		fs.int64(&cfg.HookMaxBody, "hook-max-body", "BENCHQ_HOOK_MAX_BODY", "largest CI webhook body in bytes, refused before any template secret is checked")
		fs.strs(&cfg.AllowedHosts, "allowed-hosts", "BENCHQ_ALLOWED_HOSTS", "further Host names the API answers, comma-separated, name or name:port; set (or with --public-url), any other Host but the listen address gets 421 (the all-in-one on loopback always checks)")
	}
	fs.str(&cfg.PublicURL, "public-url", "BENCHQ_PUBLIC_URL", "the API's externally reachable base URL: the links in webhook payloads start with it (empty: the all-in-one listen address; relative links in a worker), and the API answers its host (see --allowed-hosts)")
	if cfg.Command != CommandServe {
		fs.integer(&cfg.Workers, "workers", "BENCHQ_WORKERS", "jobs one worker process runs at once")
		fs.duration(&cfg.JobLease, "job-lease", "BENCHQ_JOB_LEASE", "how long a job's worker may go silent before another worker resumes the job as crashed")
		fs.integer(&cfg.CrashRetries, "crash-retries", "BENCHQ_CRASH_RETRIES", "how many times in a row a job is resumed after its worker died running it with no run stored since the previous death; the next such death fails it")
		fs.integer(&cfg.CrashLimit, "crash-limit", "BENCHQ_CRASH_LIMIT", "how many worker deaths in all a job is resumed after, runs stored between them or not")
		fs.duration(&cfg.PollInterval, "poll-interval", "BENCHQ_POLL_INTERVAL", "how often an idle worker looks for a job (shorter: quicker pick-up, more CPU while idle)")
		fs.duration(&cfg.ShardWait, "shard-wait", "BENCHQ_SHARD_WAIT", "how long a sharded run waits for sweep.shards free worker processes before its job fails")
		fs.str(&cfg.WorkerPool, "worker-pool", "BENCHQ_WORKER_POOL", "a label for the machines this worker runs on (e.g. bare-metal-2c), stored in each run's testbed: a template's history is compared per testbed")
		fs.durations(&cfg.WebhookBackoff, "webhook-backoff", "BENCHQ_WEBHOOK_BACKOFF", "waits before each webhook retry, comma-separated (empty: 5s,5m,30m,2h,5h,10h,14h,20h,24h)")
		fs.integer(&cfg.WebhookConcurrency, "webhook-concurrency", "BENCHQ_WEBHOOK_CONCURRENCY", "webhook deliveries one worker process makes at once")
		fs.duration(&cfg.WebhookTimeout, "webhook-timeout", "BENCHQ_WEBHOOK_TIMEOUT", "bound on one webhook delivery attempt")
		fs.integer(&cfg.WebhookPerOwner, "webhook-per-owner", "BENCHQ_WEBHOOK_PER_OWNER", "webhook deliveries of one API key's jobs one worker process makes at once (0: a quarter of --webhook-concurrency)")
		fs.str(&cfg.GitHubAPIURL, "github-api-url", "BENCHQ_GITHUB_API_URL", "GitHub's REST API, where jobs' notify.github statuses and comments go (GitHub Enterprise Server: https://HOST/api/v3); the token is BENCHQ_GITHUB_TOKEN, read from the environment only")
		fs.str(&cfg.GitLabAPIURL, "gitlab-api-url", "BENCHQ_GITLAB_API_URL", "GitLab's REST API, where jobs' notify.gitlab statuses and notes go; the token is BENCHQ_GITLAB_TOKEN, read from the environment only")
	}
	fs.strs(&cfg.AllowTargets, "allow-targets", "BENCHQ_ALLOW_TARGETS", "CIDRs and host globs targets and webhooks may reach although private or loopback, comma-separated (e.g. 10.1.0.0/16,*.staging.example)")
	fs.boolean(&cfg.VerifyTargets, "verify-targets", "BENCHQ_VERIFY_TARGETS", "require each target host to serve the API key's token at /benchq-verify-<token>.txt")
	fs.duration(&cfg.Retention, "retention", "BENCHQ_RETENTION", "how long finished jobs are kept")
	fs.duration(&cfg.ShutdownTimeout, "shutdown-timeout", "BENCHQ_SHUTDOWN_TIMEOUT", "bound on graceful shutdown")
	fs.text(&logLevel{&cfg.LogLevel}, "log-level", "BENCHQ_LOG_LEVEL", "minimum log level: debug, info, warn, error")
	fs.str(&cfg.LogFormat, "log-format", "BENCHQ_LOG_FORMAT", "log format: text or json")
}

// fromEnv applies the variable behind a flag, if set, through parse.
func (fs *flagSet) fromEnv(name, env string, parse func(string) error) {
	fs.envs[name] = env
	v := fs.getenv(env)
	if v == "" {
		return
	}
	if err := parse(v); err != nil {
		fs.envErrs[name] = fmt.Sprintf("%s=%q: %s", env, v, valueProblem(err))
	}
}

func (fs *flagSet) str(p *string, name, env, usage string) {
	fs.fromEnv(name, env, func(v string) error { *p = v; return nil })
	fs.StringVar(p, name, *p, usage)
}

func (fs *flagSet) integer(p *int, name, env, usage string) {
	fs.fromEnv(name, env, func(v string) error {
		n, err := strconv.Atoi(v)
		if err == nil {
			*p = n
		}
		return err
	})
	fs.IntVar(p, name, *p, usage)
}

func (fs *flagSet) int64(p *int64, name, env, usage string) {
	fs.fromEnv(name, env, func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil {
			*p = n
		}
		return err
	})
	fs.Int64Var(p, name, *p, usage)
}

func (fs *flagSet) duration(p *time.Duration, name, env, usage string) {
	fs.fromEnv(name, env, func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil {
			*p = d
		}
		return err
	})
	fs.DurationVar(p, name, *p, usage)
}

// durationList is a flag.Value of comma-separated positive durations.
type durationList struct{ p *[]time.Duration }

func (d durationList) String() string {
	if d.p == nil {
		return ""
	}
	parts := make([]string, len(*d.p))
	for i, v := range *d.p {
		parts[i] = v.String()
	}
	return strings.Join(parts, ",")
}

func (d durationList) Set(v string) error {
	var out []time.Duration
	for _, part := range strings.Split(v, ",") {
		x, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		if x <= 0 {
			return fmt.Errorf("%s is not positive", x)
		}
		out = append(out, x)
	}
	*d.p = out
	return nil
}

func (fs *flagSet) durations(p *[]time.Duration, name, env, usage string) {
	fs.fromEnv(name, env, durationList{p}.Set)
	fs.Var(durationList{p}, name, usage)
}

// stringList is a flag.Value of comma-separated entries; blanks are dropped.
type stringList struct{ p *[]string }

func (l stringList) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}

func (l stringList) Set(v string) error {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	*l.p = out
	return nil
}

func (fs *flagSet) strs(p *[]string, name, env, usage string) {
	fs.fromEnv(name, env, stringList{p}.Set)
	fs.Var(stringList{p}, name, usage)
}

func (fs *flagSet) boolean(p *bool, name, env, usage string) {
	fs.fromEnv(name, env, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err == nil {
			*p = b
		}
		return err
	})
	fs.BoolVar(p, name, *p, usage)
}

// valueProblem is why a variable's value did not parse, in words rather
// than as the parser's error ("strconv.Atoi: parsing ...").
func valueProblem(err error) string {
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange):
		return "out of range"
	case errors.As(err, &ne) && ne.Func == "ParseBool":
		return "want true or false"
	case errors.As(err, &ne):
		return "not a number"
	}
	return err.Error()
}

// logLevel is a slog.Level whose parse error names the levels rather than
// quoting slog's.
type logLevel struct{ *slog.Level }

func (l logLevel) UnmarshalText(b []byte) error {
	if err := l.Level.UnmarshalText(b); err != nil {
		return errors.New("want debug, info, warn or error")
	}
	return nil
}

type textValue interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

func (fs *flagSet) text(p textValue, name, env, usage string) {
	fs.fromEnv(name, env, func(v string) error { return p.UnmarshalText([]byte(v)) })
	fs.TextVar(p, name, p, usage)
}

// envErr reports the variables that did not parse, unless the flag
// overriding them was given.
func (fs *flagSet) envErr() error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var problems []string
	fs.VisitAll(func(f *flag.Flag) {
		if msg, ok := fs.envErrs[f.Name]; ok && !set[f.Name] {
			problems = append(problems, msg)
		}
	})
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
}

func (fs *flagSet) usage(w io.Writer, cmd Command) {
	switch cmd {
	case CommandServe:
		fmt.Fprintln(w, "Usage: benchq serve [flags]\n\nRuns the API only, against a shared Redis.")
	case CommandWorker:
		fmt.Fprintln(w, "Usage: benchq worker [flags]\n\nRuns a worker only, against a shared Redis.")
	default:
		fmt.Fprintln(w, "Usage: benchq [all] [flags]\n\nWith no command, or all: the API, one worker and, without a Redis URL, its own\nRedis: a redis-server child keeping its data in --data-dir when\nredis-server is on PATH, else (or with --ephemeral) an embedded in-memory\nRedis that keeps nothing. Flags override the environment variables. benchq help lists the other commands.")
	}
	fmt.Fprintln(w, "\nFlags:")
	fs.VisitAll(func(f *flag.Flag) {
		def := f.DefValue
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(w, "  --%s\n\t%s (env %s, default %s)\n", f.Name, f.Usage, fs.envs[f.Name], def)
	})
	if cmd != CommandServe {
		fmt.Fprintf(w, "\nEnvironment only:\n  %s, %s\n\tthe service's tokens for jobs' notify statuses and comments, used when a job's template keeps no api_token of its own\n", envGitHubToken, envGitLabToken)
	}
}
