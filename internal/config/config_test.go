package config

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(Config) (got, want any)
	}{
		{"defaults", nil, nil, func(c Config) (any, any) {
			return c, Defaults()
		}},
		{"env addr", nil, map[string]string{"BENCHQ_ADDR": "127.0.0.1:9999"}, func(c Config) (any, any) {
			return c.Addr, "127.0.0.1:9999"
		}},
		{"flag overrides env", []string{"--addr", "127.0.0.1:1"}, map[string]string{"BENCHQ_ADDR": "127.0.0.1:9999"}, func(c Config) (any, any) {
			return c.Addr, "127.0.0.1:1"
		}},
		{"flag fixes a bad env value", []string{"-workers=3"}, map[string]string{"BENCHQ_WORKERS": "many"}, func(c Config) (any, any) {
			return c.Workers, 3
		}},
		{"serve with redis env", []string{"serve"}, map[string]string{"BENCHQ_REDIS_URL": "redis://127.0.0.1:6379/0"}, func(c Config) (any, any) {
			return c.Command, CommandServe
		}},
		{"worker concurrency from env", []string{"worker", "--redis-url", "redis://127.0.0.1:6379"}, map[string]string{"BENCHQ_WORKERS": "4"}, func(c Config) (any, any) {
			return c.Workers, 4
		}},
		{"durations", []string{"--retention=1h", "--shutdown-timeout=5s"}, map[string]string{"BENCHQ_RETENTION": "2h"}, func(c Config) (any, any) {
			return [2]time.Duration{c.Retention, c.ShutdownTimeout}, [2]time.Duration{time.Hour, 5 * time.Second}
		}},
		{"log level env", nil, map[string]string{"BENCHQ_LOG_LEVEL": "debug"}, func(c Config) (any, any) {
			return c.LogLevel, slog.LevelDebug
		}},
		{"max body flag", []string{"--max-body", "2048"}, nil, func(c Config) (any, any) {
			return c.MaxBody, int64(2048)
		}},
		{"limits", []string{"--max-concurrency", "64", "--max-duration", "2m"}, map[string]string{"BENCHQ_MAX_RUNS": "10"}, func(c Config) (any, any) {
			return [3]int64{int64(c.MaxConcurrency), int64(c.MaxDuration), int64(c.MaxRuns)}, [3]int64{64, int64(2 * time.Minute), 10}
		}},
		{"webhook backoff env", nil, map[string]string{"BENCHQ_WEBHOOK_BACKOFF": "1s, 2s,5s"}, func(c Config) (any, any) {
			return c.WebhookBackoff, []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}
		}},
		{"webhook backoff flag", []string{"--webhook-backoff=100ms", "--webhook-timeout=3s"}, map[string]string{"BENCHQ_WEBHOOK_BACKOFF": "1s"}, func(c Config) (any, any) {
			return [2]any{c.WebhookBackoff, c.WebhookTimeout}, [2]any{[]time.Duration{100 * time.Millisecond}, 3 * time.Second}
		}},
		{"public url env, trailing slash dropped", []string{"worker", "--redis-url=redis://127.0.0.1:1"}, map[string]string{"BENCHQ_PUBLIC_URL": "https://benchq.example/"}, func(c Config) (any, any) {
			return c.PublicURL, "https://benchq.example"
		}},
		{"public url flag", []string{"--public-url", "http://127.0.0.1:8080/benchq"}, map[string]string{"BENCHQ_PUBLIC_URL": "https://other.example"}, func(c Config) (any, any) {
			return c.PublicURL, "http://127.0.0.1:8080/benchq"
		}},
		{"serve takes a public url and allowed hosts", []string{"serve", "--redis-url=redis://127.0.0.1:1", "--public-url", "https://benchq.example"}, map[string]string{"BENCHQ_ALLOWED_HOSTS": "benchq-api.benchq.svc, lb.example:8443,[::1],"}, func(c Config) (any, any) {
			return [2]any{c.PublicURL, c.AllowedHosts}, [2]any{"https://benchq.example", []string{"benchq-api.benchq.svc", "lb.example:8443", "[::1]"}}
		}},
		{"auth and admission quotas", []string{"--auth=keys", "--max-active-jobs=3"}, map[string]string{"BENCHQ_SUBMISSIONS_PER_MINUTE": "5", "BENCHQ_AUTH": "auto"}, func(c Config) (any, any) {
			return [3]any{c.Auth, c.MaxActiveJobs, c.SubmissionsPerMinute}, [3]any{"keys", 3, 5}
		}},
		{"stream caps", []string{"serve", "--redis-url=redis://127.0.0.1:1", "--max-streams=200"}, map[string]string{"BENCHQ_MAX_STREAMS_PER_KEY": "7"}, func(c Config) (any, any) {
			return [2]int{c.MaxStreamsPerKey, c.MaxStreams}, [2]int{7, 200}
		}},
		{"allow targets env", nil, map[string]string{"BENCHQ_ALLOW_TARGETS": "127.0.0.0/8, *.staging.example,"}, func(c Config) (any, any) {
			return c.AllowTargets, []string{"127.0.0.0/8", "*.staging.example"}
		}},
		{"verify targets flag over env", []string{"worker", "--redis-url", "redis://127.0.0.1:6379", "--verify-targets"}, map[string]string{"BENCHQ_VERIFY_TARGETS": "false"}, func(c Config) (any, any) {
			return c.VerifyTargets, true
		}},
		{"crash recovery", []string{"worker", "--redis-url", "redis://127.0.0.1:6379", "--job-lease=3s"}, map[string]string{"BENCHQ_CRASH_RETRIES": "0"}, func(c Config) (any, any) {
			return [2]any{c.JobLease, c.CrashRetries}, [2]any{3 * time.Second, 0}
		}},
		{"shard wait", []string{"worker", "--redis-url", "redis://127.0.0.1:6379"}, map[string]string{"BENCHQ_SHARD_WAIT": "5s"}, func(c Config) (any, any) {
			return c.ShardWait, 5 * time.Second
		}},
		{"worker pool", []string{"worker", "--redis-url", "redis://127.0.0.1:6379"}, map[string]string{"BENCHQ_WORKER_POOL": "bare-metal-2c"}, func(c Config) (any, any) {
			return c.WorkerPool, "bare-metal-2c"
		}},
		{"all explicit", []string{"all", "--addr=127.0.0.1:0"}, nil, func(c Config) (any, any) {
			return c.Command, CommandAll
		}},
		{"data dir under XDG_DATA_HOME", nil, map[string]string{"XDG_DATA_HOME": "/x/data", "HOME": "/home/u"}, func(c Config) (any, any) {
			return c.DataDir, "/x/data/benchq/redis"
		}},
		{"data dir under HOME without XDG_DATA_HOME", nil, map[string]string{"HOME": "/home/u"}, func(c Config) (any, any) {
			return c.DataDir, "/home/u/.local/share/benchq/redis"
		}},
		{"relative XDG_DATA_HOME ignored", nil, map[string]string{"XDG_DATA_HOME": "data", "HOME": "/home/u"}, func(c Config) (any, any) {
			return c.DataDir, "/home/u/.local/share/benchq/redis"
		}},
		{"no home: no data dir", nil, nil, func(c Config) (any, any) {
			return c.DataDir, ""
		}},
		{"data dir env over XDG", nil, map[string]string{"BENCHQ_DATA_DIR": "/srv/bq", "XDG_DATA_HOME": "/x/data"}, func(c Config) (any, any) {
			return c.DataDir, "/srv/bq"
		}},
		{"data dir flag over env", []string{"--data-dir", "/tmp/bq"}, map[string]string{"BENCHQ_DATA_DIR": "/srv/bq"}, func(c Config) (any, any) {
			return c.DataDir, "/tmp/bq"
		}},
		{"ephemeral flag", []string{"--ephemeral"}, map[string]string{"HOME": "/home/u"}, func(c Config) (any, any) {
			return c.Ephemeral, true
		}},
		{"ephemeral env", nil, map[string]string{"BENCHQ_EPHEMERAL": "true"}, func(c Config) (any, any) {
			return c.Ephemeral, true
		}},
		{"serve gets no data dir", []string{"serve", "--redis-url", "redis://127.0.0.1:6379"}, map[string]string{"HOME": "/home/u"}, func(c Config) (any, any) {
			return c.DataDir, ""
		}},
		{"unix socket url", []string{"worker", "--redis-url", "unix:///tmp/bq/redis.sock"}, nil, func(c Config) (any, any) {
			return c.RedisURL, "unix:///tmp/bq/redis.sock"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.args, env(tt.env))
			if err != nil {
				t.Fatalf("Load(%q) error: %v", tt.args, err)
			}
			if got, want := tt.check(c); !reflect.DeepEqual(got, want) {
				t.Errorf("Load(%q, %v) = %+v, want %+v", tt.args, tt.env, got, want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		mention string
	}{
		{"serve without redis", []string{"serve"}, nil, "needs a Redis URL"},
		{"worker without redis", []string{"worker"}, nil, "needs a Redis URL"},
		{"bad env duration", nil, map[string]string{"BENCHQ_RETENTION": "forever"}, "BENCHQ_RETENTION"},
		{"bad env int", nil, map[string]string{"BENCHQ_WORKERS": "x"}, "BENCHQ_WORKERS"},
		{"zero workers", []string{"--workers", "0"}, nil, "workers must be at least 1"},
		{"unknown auth mode", nil, map[string]string{"BENCHQ_AUTH": "none"}, "auth must be auto or keys"},
		{"zero active jobs", []string{"--max-active-jobs=0"}, nil, "max-active-jobs and submissions-per-minute must be at least 1"},
		{"zero streams per key", nil, map[string]string{"BENCHQ_MAX_STREAMS_PER_KEY": "0"}, "max-streams-per-key and max-streams must be at least 1"},
		{"bad scheme", []string{"--redis-url", "http://127.0.0.1:6379"}, nil, "scheme"},
		{"unknown flag", []string{"--nope"}, nil, "nope"},
		{"worker has no addr", []string{"worker", "--redis-url", "redis://127.0.0.1:6379", "--addr", "127.0.0.1:1"}, nil, "addr"},
		{"serve has no workers", []string{"serve", "--redis-url", "redis://127.0.0.1:6379", "--workers", "2"}, nil, "workers"},
		{"stray argument", []string{"serve", "extra"}, map[string]string{"BENCHQ_REDIS_URL": "redis://127.0.0.1:6379"}, "extra"},
		{"bad log format", []string{"--log-format", "xml"}, nil, "log-format"},
		{"negative timeout", []string{"--read-timeout", "-1s"}, nil, "read-timeout"},
		{"negative limit", []string{"--max-runs", "-1"}, nil, "max-runs"},
		{"negative crash retries", nil, map[string]string{"BENCHQ_CRASH_RETRIES": "-1"}, "crash-retries"},
		{"job lease too short to renew", []string{"--job-lease", "200ms"}, nil, "job-lease must be at least 1s"},
		{"serve runs no jobs", []string{"serve", "--redis-url", "redis://127.0.0.1:6379", "--job-lease", "5s"}, nil, "job-lease"},
		{"bad log level", nil, map[string]string{"BENCHQ_LOG_LEVEL": "loud"}, "BENCHQ_LOG_LEVEL"},
		{"bad allow-targets entry", []string{"--allow-targets", "10.0.0.0/8,10.0.0.0/33"}, nil, `"10.0.0.0/33"`},
		{"bad verify-targets", nil, map[string]string{"BENCHQ_VERIFY_TARGETS": "maybe"}, "BENCHQ_VERIFY_TARGETS"},
		{"bad webhook backoff", nil, map[string]string{"BENCHQ_WEBHOOK_BACKOFF": "1s,soon"}, "BENCHQ_WEBHOOK_BACKOFF"},
		{"zero webhook backoff", []string{"--webhook-backoff", "1s,0s"}, nil, "webhook-backoff"},
		{"allowed host with a scheme", []string{"--allowed-hosts", "https://benchq.example"}, nil, `"https://benchq.example"`},
		{"allowed host wildcard", nil, map[string]string{"BENCHQ_ALLOWED_HOSTS": "*.example"}, `"*.example"`},
		{"allowed host bad port", []string{"--allowed-hosts", "benchq.example:0"}, nil, "1-65535"},
		{"worker has no allowed hosts", []string{"worker", "--redis-url", "redis://127.0.0.1:6379", "--allowed-hosts", "a.example"}, nil, "allowed-hosts"},
		{"relative public url", nil, map[string]string{"BENCHQ_PUBLIC_URL": "benchq.example"}, "public-url"},
		{"public url with a query", []string{"--public-url", "https://benchq.example/?x=1"}, nil, "public-url"},
		{"serve has no auth mode: it always needs keys", []string{"serve", "--redis-url", "redis://127.0.0.1:6379", "--auth", "auto"}, nil, "auth"},
		{"serve has no data dir", []string{"serve", "--redis-url", "redis://127.0.0.1:6379", "--data-dir", "/tmp/x"}, nil, "data-dir"},
		{"worker has no ephemeral", []string{"worker", "--redis-url", "redis://127.0.0.1:6379", "--ephemeral"}, nil, "ephemeral"},
		{"ephemeral with a redis url", []string{"--ephemeral", "--redis-url", "redis://127.0.0.1:6379"}, nil, "give one or the other"},
		{"bad ephemeral env", nil, map[string]string{"BENCHQ_EPHEMERAL": "sometimes"}, "BENCHQ_EPHEMERAL"},
		{"serve has no webhook backoff", []string{"serve", "--redis-url", "redis://127.0.0.1:6379", "--webhook-backoff", "1s"}, nil, "webhook-backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.args, env(tt.env))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Load(%q, %v) = %v, want ErrInvalid", tt.args, tt.env, err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("Load(%q) = %q, want it to mention %q", tt.args, err, tt.mention)
			}
		})
	}
}

func TestLoadHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"serve", "--help"}, {"worker", "-help"}} {
		if _, err := Load(args, env(nil)); !errors.Is(err, ErrHelp) {
			t.Errorf("Load(%q) = %v, want ErrHelp", args, err)
		}
	}
}

func TestUsageListsEveryFlag(t *testing.T) {
	var b strings.Builder
	Usage(&b, CommandAll)
	out := b.String()
	for _, want := range []string{
		"--addr", "BENCHQ_ADDR", "default 127.0.0.1:8080",
		"--redis-url", "BENCHQ_REDIS_URL",
		"--workers", "BENCHQ_WORKERS", "default 1",
		"--retention", "BENCHQ_RETENTION", "default 720h0m0s",
		"--shutdown-timeout", "BENCHQ_SHUTDOWN_TIMEOUT",
		"--log-level", "BENCHQ_LOG_LEVEL", "default INFO",
		"--max-body", "BENCHQ_MAX_BODY", "default 1048576",
		"BENCHQ_READ_HEADER_TIMEOUT", "BENCHQ_IDLE_TIMEOUT",
		"BENCHQ_MAX_CONCURRENCY", "BENCHQ_MAX_REQUESTS", "BENCHQ_MAX_RUNS", "BENCHQ_MAX_DURATION",
		"--allow-targets", "BENCHQ_ALLOW_TARGETS", "--verify-targets", "BENCHQ_VERIFY_TARGETS",
		"--webhook-backoff", "BENCHQ_WEBHOOK_BACKOFF", "BENCHQ_WEBHOOK_CONCURRENCY", "default 10",
		"--webhook-timeout", "BENCHQ_WEBHOOK_TIMEOUT", "default 10s",
		"--public-url", "BENCHQ_PUBLIC_URL", "--allowed-hosts", "BENCHQ_ALLOWED_HOSTS",
		"--data-dir", "BENCHQ_DATA_DIR", "$XDG_DATA_HOME/benchq/redis", "~/.local/share/benchq/redis",
		"--ephemeral", "BENCHQ_EPHEMERAL",
		"--unavailable-retry-after", "BENCHQ_UNAVAILABLE_RETRY_AFTER", "default 5s",
		"--job-lease", "BENCHQ_JOB_LEASE", "default 10s", "--crash-retries", "BENCHQ_CRASH_RETRIES", "default 3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Usage(all) lacks %q:\n%s", want, out)
		}
	}
}
