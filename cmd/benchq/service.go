package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/api"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/schedule"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/worker"
)

// Main is one benchq service process: the API, a worker, or both, around
// one shared Redis client. Tests run the whole service in-process with
// Addr "127.0.0.1:0" and read the bound address from Addr().
type Main struct {
	Config config.Config
	Logger *slog.Logger
	// Policy admits target and webhook addresses, at submission and again
	// on each dial; nil means the policy of the command (policy.go):
	// loopback only for "all", public addresses for serve and worker, each
	// widened by --allow-targets.
	Policy *netguard.Policy
	// Resolver looks up target and webhook hosts for the policy, at
	// submission and on each dial; nil means the system resolver. Tests
	// stub it to send names to loopback.
	Resolver netguard.Resolver

	redis    *redisConn
	rdb      redis.UniversalClient
	queue    *asynq.Client
	api      *api.Server
	listener net.Listener

	stopWorker    context.CancelFunc
	stopScheduler context.CancelFunc
	wg            sync.WaitGroup
	failed        chan error
	closing       chan struct{} // closed when Close begins
	closeOnce     sync.Once
	closeErr      error
}

// NewMain returns a Main for cfg; nothing starts until Run.
func NewMain(cfg config.Config, logger *slog.Logger) *Main {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Main{Config: cfg, Logger: logger, failed: make(chan error, 3), closing: make(chan struct{})}
}

// Run connects to Redis and starts the components of the configured
// command. It returns once the API listens; the components then run in the
// background until Close (or until one fails, reported on Failed).
func (m *Main) Run(ctx context.Context) error {
	if m.Policy == nil {
		p, err := policyFor(m.Config)
		if err != nil {
			return err
		}
		m.Policy = p
	}
	conn, err := openRedis(ctx, m.Config, m.Logger) // redis.go
	if err != nil {
		return err
	}
	m.redis, m.rdb = conn, conn.rdb
	conn.announce(ctx)
	go m.watchRedis(conn.childDone())
	st := store.New(m.rdb, store.Options{Retention: m.Config.Retention})
	if n, err := st.MigrateKeys(ctx); err != nil {
		return fmt.Errorf("benchq: %w", err)
	} else if n > 0 {
		m.Logger.Info("benchq: Redis keys renamed to the hash-tagged layout", "keys", n)
	}
	m.startBackfill(st)
	if m.Config.Command != config.CommandWorker {
		// Templates saved before their usage was kept count against
		// their owners' limits, and CI deliveries find them, from now on.
		if n, err := st.AccountTemplates(ctx); err != nil {
			return fmt.Errorf("benchq: %w", err)
		} else if n > 0 {
			m.Logger.Info("benchq: templates accounted for their owners' limits", "templates", n)
		}
		if err := m.startAPI(st); err != nil {
			return err
		}
	}
	if m.Config.Command != config.CommandServe {
		m.startWorker(st)
	}
	return nil
}

func (m *Main) startAPI(st *store.Store) error {
	l, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("benchq: listen on %s: %w", m.Config.Addr, err)
	}
	m.listener = l
	m.queue = asynq.NewClientFromRedisClient(m.rdb)
	c := m.Config
	lim := job.Limits{MaxConcurrency: c.MaxConcurrency, MaxRequests: c.MaxRequests, MaxRuns: c.MaxRuns, MaxDuration: c.MaxDuration}
	m.api = api.New(api.Config{
		MaxBody:           c.MaxBody,
		Limits:            &lim,
		CheckURL:          withAllowHint(m.urlChecker().Check),
		CheckURLs:         m.urlSession, // policy.go
		VerifyTargets:     c.VerifyTargets,
		Logger:            m.Logger,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,

		UnavailableRetryAfter: c.UnavailableRetryAfter,

		// Only the all-in-one development command may be open; serve
		// always needs keys.
		OpenUntilFirstKey:    c.Command == config.CommandAll && c.Auth == "auto",
		MaxActiveJobs:        c.MaxActiveJobs,
		SubmissionsPerMinute: c.SubmissionsPerMinute,
		MaxStreamsPerKey:     c.MaxStreamsPerKey,
		MaxStreams:           c.MaxStreams,
		MaxTemplates:         c.MaxTemplates,
		MaxTemplateBytes:     c.MaxTemplateBytes,
		MaxSchedules:         c.MaxSchedules,
		MaxPins:              c.MaxPins,
		HookMaxBody:          c.HookMaxBody,
		// The Host values the API answers besides its listen address.
		PublicURL:    c.PublicURL,
		AllowedHosts: c.AllowedHosts,
	}, api.Deps{Store: st, Queue: m.queue, Inspector: asynq.NewInspectorFromRedisClient(m.rdb), Keys: st, Quotas: st,
		Deliveries: st, Targets: m.targetVerifier(st), Idempotency: st, Selector: st, Templates: st, Schedules: st, Pinner: st,
		Monitor: queueMonitor(m.rdb), Streams: st, ChangePoints: st})
	// The listener is bound: these URLs answer from now on, and the
	// dashboard's is what a person starting benchq looks for.
	base := browseBase(l.Addr(), c.PublicURL)
	m.Logger.Info("benchq: API listening", "addr", l.Addr().String(), "command", string(c.Command),
		"dashboard", base+"/ui/", "api", base+"/v1/", "api_docs", base+"/docs")
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.api.Serve(l); err != nil {
			m.failed <- err
		}
	}()
	m.startScheduler(st)
	return nil
}

// startBackfill indexes, in the background, the jobs stored before the
// owners' status and label indexes existed; listings read the jobs as
// before until it is done, so nothing waits for it.
func (m *Main) startBackfill(st *store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		go func() {
			select {
			case <-m.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		start := time.Now()
		n, err := st.BackfillIndexes(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			m.Logger.Warn("benchq: indexing stored jobs by status and label failed; listings stay slower until a restart completes it", "indexed", n, "err", err)
		case err == nil && n > 0:
			m.Logger.Info("benchq: stored jobs indexed by status and label", "jobs", n, "took", time.Since(start).Round(time.Millisecond))
		}
	}()
}

// startScheduler runs the template schedules beside the API: every API
// replica runs one, and each tick is claimed in Redis, so it fires once
// however many replicas there are.
func (m *Main) startScheduler(st *store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	m.stopScheduler = cancel
	sc := schedule.New(st, m.api.Admitter(), schedule.Config{Log: m.Logger})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_ = sc.Run(ctx)
	}()
}

func (m *Main) startWorker(st *store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	m.stopWorker = cancel
	w := worker.New(m.rdb, st, worker.Config{
		Concurrency:     m.Config.Workers,
		ShutdownTimeout: m.Config.ShutdownTimeout,
		JobLease:        m.Config.JobLease,
		CrashRetries:    crashRetries(m.Config.CrashRetries),
		CrashLimit:      m.Config.CrashLimit,
		ShardWait:       m.Config.ShardWait,
		PollInterval:    m.Config.PollInterval,
		Pool:            m.Config.WorkerPool,
		Logger:          m.Logger,
		Policy:          m.Policy,
		Resolver:        m.Resolver,
		Notifier:        m.startWebhooks(ctx, st), // webhooks.go
		Targets:         m.workerTargets(st),      // policy.go
	})
	m.Logger.Info("benchq: worker started", "concurrency", m.Config.Workers)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := w.Run(ctx); err != nil && ctx.Err() == nil {
			m.failed <- fmt.Errorf("benchq: worker: %w", err)
		}
	}()
}

// watchRedis reports a redis-server child that could not be kept running
// (it kept failing as soon as it was restarted) as a component failure:
// without it every request would fail until benchq restarts.
func (m *Main) watchRedis(done <-chan struct{}) {
	select {
	case <-done:
		select {
		case <-m.closing:
		default:
			m.failed <- fmt.Errorf("benchq: the redis-server child exited for good: %w", m.redis.child.Err())
		}
	case <-m.closing:
	}
}

// Addr is the API's bound address ("127.0.0.1:41234"), or "" when this
// process runs no API.
func (m *Main) Addr() string {
	if m.listener == nil {
		return ""
	}
	return m.listener.Addr().String()
}

// URL is the API's base URL, "http://" + Addr().
func (m *Main) URL() string { return "http://" + m.Addr() }

// Failed delivers an error when a component stops on its own.
func (m *Main) Failed() <-chan error { return m.failed }

// Close shuts down gracefully within Config.ShutdownTimeout: the API stops
// accepting and finishes requests in flight, the worker finishes or hands
// back its run, then Redis connections close. It is safe to call twice.
func (m *Main) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Main) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
	defer cancel()
	close(m.closing)
	var errs []error
	if m.api != nil {
		errs = append(errs, m.api.Shutdown(ctx))
	}
	if m.stopScheduler != nil {
		m.stopScheduler()
	}
	if m.stopWorker != nil {
		m.stopWorker()
	}
	m.wg.Wait()
	if m.redis != nil {
		errs = append(errs, m.redis.close(m.Config.ShutdownTimeout))
	}
	m.Logger.Info("benchq: stopped")
	return errors.Join(errs...)
}

// crashRetries maps the configured count onto worker.Config, whose zero
// means its default: a configured 0 resumes no crashed job.
func crashRetries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// browseBase is the base URL to print for a person: the public URL when
// one is configured, else the listen address, with localhost for an
// unspecified one (0.0.0.0, ::), which no browser should be sent to.
func browseBase(addr net.Addr, publicURL string) string {
	if publicURL != "" {
		return publicURL
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
