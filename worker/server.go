package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
)

// Fixed timings of the runner.
const (
	// cancelPollInterval: with loadgen stopping within a second of its
	// context ending, a DELETE stops the load within 1.2 s at worst.
	cancelPollInterval = 200 * time.Millisecond
	// progressInterval caps progress writes at 4 a second.
	progressInterval = 250 * time.Millisecond
	// cleanupTimeout bounds the writes that record how an attempt ended.
	cleanupTimeout = 5 * time.Second
	// handBackDelay is how soon a handed-back job may be picked up again.
	handBackDelay = time.Second
	// outageRetryCap bounds the wait before retrying a task that a Redis
	// outage cut short.
	outageRetryCap = 10 * time.Second
	// DefaultPollInterval is how often an idle worker polls for a job:
	// asynq has no blocking pop and sleeps 0.5-1.5x this on empty queues.
	// Each poll runs asynq's dequeue script once per queue, and an idle
	// worker shares its core with the next run's load generator (or is
	// it): at 20 ms the all-in-one on its embedded Redis, which interprets
	// the script in Lua, spent 7 % of a core idle; at 100 ms 2 %, for a
	// pick-up (POST to first request) of about 110 ms, 160 ms at p99. asynq's own 1 s default made the time from
	// POST to first request about a second.
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultShutdownTimeout is how long a run may go on after Shutdown.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultCrashRetries is how many worker deaths in a row, with no run
	// stored between them, a job is resumed after.
	DefaultCrashRetries = 3
	// DefaultCrashLimit is how many worker deaths in all a job is resumed
	// after, runs stored between them or not: enough for a long sweep on
	// workers that come and go, few enough that a job killing its worker
	// after every run ends.
	DefaultCrashLimit = 10
)

// Config configures a Worker.
type Config struct {
	// Concurrency is the number of jobs run at once; zero means 1: a load
	// generator must not share its CPU with another benchmark.
	Concurrency int
	// ShutdownTimeout bounds how long Shutdown lets the current run finish
	// before the run is discarded and the job handed back; zero means 30s.
	ShutdownTimeout time.Duration
	// Logger receives the worker's and asynq's logs; nil means slog.Default().
	Logger *slog.Logger
	// Policy decides which addresses the load may reach; each run
	// resolves its targets once through Resolver (nil: the system's) and
	// has every connect admitted (netguard.LoadGuard). Nil means loopback
	// only, so a worker built without a policy can never send load off
	// this machine.
	Policy   *netguard.Policy
	Resolver netguard.Resolver
	// Notifier hears when a job starts and ends (WebhookNotifier sends its
	// webhooks); nil means nobody is told.
	Notifier Notifier
	// Targets, when set, checks that every target host still serves its
	// owner's verification token before an attempt sends any load
	// (verify.go); nil skips the check.
	Targets TargetChecker
	// JanitorInterval is how often the janitor ends the jobs whose task
	// asynq archived without a handler running (janitor.go); zero means
	// DefaultJanitorInterval.
	JanitorInterval time.Duration
	// JobLease is how long a running job's attempt may go without renewing
	// its lease before the job counts as crashed and another worker
	// resumes it (lease.go); zero means DefaultJobLease. Each worker looks
	// for such jobs five times per lease.
	JobLease time.Duration
	// CrashRetries is how many times in a row a job whose worker died
	// running it is resumed with no run stored since the previous death;
	// the next such death fails it, as a job that keeps killing its
	// workers. A death after a run was stored starts the count again.
	// Zero means DefaultCrashRetries, a negative value none.
	CrashRetries int
	// CrashLimit is how many worker deaths in all a job is resumed after,
	// whatever was stored between them; zero means DefaultCrashLimit (and
	// never fewer than CrashRetries).
	CrashLimit int
	// ShardWait is how long a sharded run waits for all its shards to
	// join; zero means DefaultShardWait. CrashRetries also bounds how
	// often a run is redone after losing a shard.
	ShardWait time.Duration
	// PollInterval is how often an idle worker looks for a job; zero
	// means DefaultPollInterval.
	PollInterval time.Duration
	// Pool is the worker pool label stored in the testbed of each run
	// (job.Testbed.Pool); empty means none.
	Pool string
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Policy == nil {
		c.Policy = netguard.LoopbackOnly()
	}
	if c.JanitorInterval <= 0 {
		c.JanitorInterval = DefaultJanitorInterval
	}
	if c.JobLease <= 0 {
		c.JobLease = DefaultJobLease
	}
	if c.ShardWait <= 0 {
		c.ShardWait = DefaultShardWait
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	switch {
	case c.CrashRetries == 0:
		c.CrashRetries = DefaultCrashRetries
	case c.CrashRetries < 0:
		c.CrashRetries = 0
	}
	if c.CrashLimit <= 0 {
		c.CrashLimit = DefaultCrashLimit
	}
	c.CrashLimit = max(c.CrashLimit, c.CrashRetries)
	return c
}

// Worker serves the jobs queue: an asynq server on the process's shared
// Redis client with the Runner behind the job:run task type, and the
// janitor that ends jobs whose task was archived without a handler.
// Webhook deliveries have their own server and queue.
type Worker struct {
	srv     *asynq.Server
	mux     *asynq.ServeMux
	runner  *Runner
	janitor *janitor
	log     *slog.Logger
}

// New builds a Worker; Start or Run starts it.
func New(rdb redis.UniversalClient, st *store.Store, cfg Config) *Worker {
	cfg = cfg.withDefaults()
	r := newRunner(st, cfg)
	r.shards = shardTasks{Client: asynq.NewClientFromRedisClient(rdb), ins: asynq.NewInspectorFromRedisClient(rdb)}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: cfg.Concurrency,
		// A free worker joins a sharded run waiting for it before it
		// takes a job of its own: the run holds its other workers
		// meanwhile.
		Queues:            map[string]int{queue.QueueShards: 2, queue.QueueJobs: 1},
		StrictPriority:    true,
		ShutdownTimeout:   cfg.ShutdownTimeout,
		RetryDelayFunc:    retryDelay,
		TaskCheckInterval: cfg.PollInterval,
		// Retries wait in a sorted set that asynq scans every 5s by
		// default; a handed-back job should resume about handBackDelay
		// later, so scan every second.
		DelayedTaskCheckInterval: handBackDelay,
		IsFailure:                isFailure,
		Logger:                   asynqLogger{cfg.Logger},
		LogLevel:                 asynq.WarnLevel,
		HealthCheckFunc: func(err error) {
			if err != nil {
				cfg.Logger.Warn("worker: redis health check", "err", err)
			}
		},
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(queue.TypeJobRun, r.HandleJobRun)
	mux.HandleFunc(queue.TypeJobShard, r.HandleShard)
	jn := newJanitor(asynq.NewInspectorFromRedisClient(rdb), asynq.NewClientFromRedisClient(rdb), r,
		cfg.JanitorInterval, cfg.JobLease/leaseRenewals, cfg.Logger)
	return &Worker{srv: srv, mux: mux, runner: r, janitor: jn, log: cfg.Logger}
}

// retryDelay brings a handed-back job back at once, a job waiting for a
// target host (exclusive.go) a second later, a finished job whose
// webhook could not be queued (the retry only notifies), and a task whose
// worker died (asynq's lease on it expired), however often: asynq waited
// a minute or more already, and the job's own lease has usually had it
// resumed by another task (janitor.go), so the retry has nothing to do or
// little left. Crashes are bounded by Config.CrashRetries, not by growing
// waits. An attempt cut short by a Redis outage handed its job back once
// Redis answered again (throughOutage), so Redis is likely back: it is
// retried within seconds, a second more for each retry up to
// outageRetryCap, still counted against the task's retries so that a
// Redis that keeps refusing writes cannot have the target loaded forever.
// Other failures back off as asynq does by default.
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	switch {
	case errors.Is(err, ErrHandedBack) || errors.Is(err, errNotifyLost) || errors.Is(err, asynq.ErrLeaseExpired):
		return handBackDelay
	case errors.Is(err, errTargetBusy):
		return targetWaitDelay
	case errors.Is(err, store.ErrUnavailable):
		return min(time.Duration(n+1)*handBackDelay, outageRetryCap)
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// isFailure keeps hand-backs and waits for a busy target from using up
// the task's retries.
func isFailure(err error) bool {
	return !errors.Is(err, ErrHandedBack) && !errors.Is(err, errTargetBusy)
}

// Start starts fetching and running jobs in the background.
func (w *Worker) Start() error {
	if err := w.srv.Start(w.mux); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	w.janitor.start()
	return nil
}

// Shutdown stops the janitor and taking jobs, and lets the current run
// finish within Config.ShutdownTimeout; the job is then handed back to the
// queue. It returns once the handlers are done (or cleanupTimeout after
// asynq gave up on them).
func (w *Worker) Shutdown() {
	w.janitor.stop()
	w.runner.drain()
	w.srv.Shutdown()
	if !w.runner.wait(cleanupTimeout) {
		w.log.Warn("worker: a job handler did not return after shutdown")
	}
}

// Run starts the worker, blocks until ctx is done, then shuts down.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	w.Shutdown()
	return nil
}
