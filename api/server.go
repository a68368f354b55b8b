package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/hibiken/asynq"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/dashboard"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/undo"
)

//	@title						benchq API
//	@version					1.0
//	@description				HTTP benchmarking as a service: submit a sweep of ApacheBench-style runs, poll or stream its progress, fetch ab-compatible results.
//	@license.name				MIT
//	@BasePath					/
//	@accept						json
//	@produce					json
//	@tag.name					jobs
//	@tag.description			Benchmark jobs: submit, list, inspect, cancel, stream.
//	@tag.name					ops
//	@tag.description			Health, readiness and metrics.
//	@tag.name					targets
//	@tag.description			Target verification: prove control of a host before benchmarking it.
//	@securityDefinitions.apikey	BearerAuth
//	@in							header
//	@name						Authorization
//	@description				"Bearer <key>" with a key from `benchq keys add`. Not needed in the all-in-one open development mode (loopback listener, no key ever created).

// Config tunes the API server. Zero values mean the documented default.
type Config struct {
	// MaxBody caps a request body in bytes; zero means 1 MiB. A larger body
	// is answered with a 413 problem.
	MaxBody int64
	// Limits bound what a job may ask for; zero means job.DefaultLimits().
	Limits *job.Limits
	// OpenUntilFirstKey is the all-in-one development mode: on a loopback
	// listener, while no API key was ever created, a /v1 request without a
	// key is admitted as the anonymous owner. Off (the default), every /v1
	// request needs a key.
	OpenUntilFirstKey bool
	// PublicURL is the API's externally reachable base URL; the API
	// answers requests whose Host is its host. AllowedHosts are further
	// names ("name" for any port, or "name:port"). With either set, or
	// with OpenUntilFirstKey on a loopback listener, a request whose Host
	// names neither these nor the address its connection reached is
	// answered 421 (host.go); the health probes answer any Host.
	PublicURL    string
	AllowedHosts []string
	// MaxActiveJobs and SubmissionsPerMinute are the service-wide admission
	// quotas of a caller whose key sets none; zero means 10 and 60.
	MaxActiveJobs        int
	SubmissionsPerMinute int
	// MaxTemplates, MaxTemplateBytes, MaxSchedules and MaxPins bound what
	// a caller whose key sets none may keep stored (the quotas are
	// internal/admit's); zero means 100 templates of 4 MiB together, 50
	// schedules and 100 pinned jobs.
	MaxTemplates     int
	MaxTemplateBytes int
	MaxSchedules     int
	MaxPins          int
	// HookMaxBody caps the body of a CI delivery in bytes, checked before
	// any secret is (hooks.go); zero means 1 MiB.
	HookMaxBody int64
	// CheckURL decides which target URLs a job may reach. Required: the
	// API refuses every URL when it is nil, rather than allowing all.
	CheckURL job.URLChecker
	// CheckURLs, when set, is used instead of CheckURL for the URLs of one
	// request: its check is bound to the request's context, so the DNS
	// lookups of a submission end with it and share one budget
	// (netguard.Checker.Session).
	CheckURLs func(ctx context.Context) job.URLChecker
	// VerifyTargets refuses jobs whose target hosts do not serve the
	// caller's token (Deps.Targets checks them; without it, 503).
	VerifyTargets bool
	// Logger receives request logs and internal errors; nil discards.
	Logger *slog.Logger

	// Server timeouts; zero means 5s / 30s / 30s / 120s. They bound how long
	// a slow or idle client can hold a connection (slowloris). The write
	// timeout is lifted per write on event streams.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration

	// Heartbeat is the interval of SSE comment lines that keep proxies from
	// closing an idle stream; zero means 15s.
	Heartbeat time.Duration
	// EventPoll is how often an event stream looks for events that no
	// notice announced (one lost while the notice subscription was down,
	// or written by a worker that announces none) and whether its job
	// ended without a final event; zero means 5s. Streams read as soon as
	// a notice comes.
	EventPoll time.Duration
	// MaxStreamsPerKey and MaxStreams cap the event streams open at once
	// per API key and in this process; zero means 50 and 1000. A stream
	// over either is refused with a 429 and Retry-After.
	MaxStreamsPerKey int
	MaxStreams       int
	// UnavailableRetryAfter is the Retry-After of a 503 while Redis is
	// unreachable or refusing writes; zero means 5s. Redis comes back
	// on its own or by an operator's hand, so this is a polling interval.
	UnavailableRetryAfter time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxBody <= 0 {
		c.MaxBody = 1 << 20
	}
	if c.HookMaxBody <= 0 {
		c.HookMaxBody = defaultHookMaxBody
	}
	if c.Limits == nil {
		l := job.DefaultLimits()
		c.Limits = &l
	}
	if c.CheckURL == nil {
		c.CheckURL = func(*url.URL) error { return errNoURLPolicy }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.ReadHeaderTimeout = orDefault(c.ReadHeaderTimeout, 5*time.Second)
	c.ReadTimeout = orDefault(c.ReadTimeout, 30*time.Second)
	c.WriteTimeout = orDefault(c.WriteTimeout, 30*time.Second)
	c.IdleTimeout = orDefault(c.IdleTimeout, 120*time.Second)
	c.Heartbeat = orDefault(c.Heartbeat, 15*time.Second)
	c.EventPoll = orDefault(c.EventPoll, 5*time.Second)
	c.UnavailableRetryAfter = orDefault(c.UnavailableRetryAfter, 5*time.Second)
	return c
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Deps are the parts the API drives.
type Deps struct {
	Store JobStore
	Queue queue.Enqueuer
	// Inspector, when set, exports queue depths on /metrics.
	Inspector *asynq.Inspector
	// Deliveries keeps webhook secrets and delivery logs; nil refuses jobs
	// with a webhook (503) and the deliveries endpoints.
	Deliveries DeliveryStore
	// Keys authenticates API keys; nil means no key exists (the open mode
	// with Config.OpenUntilFirstKey on loopback, else every request refused).
	Keys KeyStore
	// Quotas enforces active jobs and submission rate; nil disables both
	// (tests of other endpoints). Per-run quotas apply regardless.
	Quotas admit.QuotaStore
	// Idempotency remembers Idempotency-Key claims; nil answers requests
	// carrying the header with 503 rather than risk a duplicate job.
	Idempotency IdempotencyStore
	// Selector resolves compare_to selectors; nil answers jobs with one
	// with 503.
	Selector admit.JobSelector
	// Targets manages target verification tokens (targets.go); nil
	// answers the /v1/targets endpoints with 503.
	Targets TargetVerifier
	// Monitor, when set, is the queue monitor mounted at /monitor/ for
	// admin keys (monitor.go); it must expect that root path.
	Monitor http.Handler
	// Templates keeps job templates (templates.go); nil answers the
	// /v1/templates and /v1/hooks endpoints with 503.
	Templates TemplateStore
	// Schedules reads the scheduler's record of each schedule
	// (schedules.go); nil lists schedules without their last runs.
	Schedules ScheduleStore
	// Pinner pins jobs past the retention (pin.go); nil answers the pin
	// endpoints with 503.
	Pinner JobPinner
	// ChangePoints keeps the change points of templates' histories
	// (changepoints.go); nil answers change_points=true and the
	// acknowledge endpoint with 503.
	ChangePoints ChangePointStore
	// Streams announces new events to event streams and tells revoked
	// keys (streams.go); nil leaves streams to poll every EventPoll and
	// open until their job ends, which only tests should want.
	Streams StreamStore
}

// Server is the benchq HTTP API.
type Server struct {
	cfg     Config
	store   JobStore
	ender   *jobend.Ender // the end of a job canceled while queued
	queue   queue.Enqueuer
	log     *slog.Logger
	echo    *echo.Echo
	http    *http.Server
	metrics *metrics
	auth    *authState
	hosts   *hostRule

	// deliveries: webhook secrets and delivery logs (deliveries.go).
	deliveries DeliveryStore

	// idempotency: idempotency.go.
	idempotency IdempotencyStore

	// idempotencyTiming: zero means the defaults; tests shorten it.
	idempotencyTiming idempotencyTiming

	// targets: target verification (targets.go).
	targets TargetVerifier

	// templates: job templates and the CI hooks that run them (templates.go,
	// hooks.go).
	templates TemplateStore
	schedules ScheduleStore
	pinner    JobPinner

	// changePoints: the change points of trends (changepoints.go).
	changePoints ChangePointStore

	// admit creates every job (internal/admit); undo retries the undoing
	// of half-done writes while Redis is away, for admit and the API.
	admit *admit.Admitter
	undo  *undo.Undoer

	// ready caches the readiness probe (health.go).
	ready *readiness

	// dashboard serves /ui (session.go); monitor /monitor (monitor.go).
	dashboard *dashboard.Handler
	monitor   http.Handler

	// streams: the open event streams (streams.go).
	streams *streamHub

	// closing is canceled when Shutdown starts, ending event streams that
	// http.Server.Shutdown would otherwise wait for until its deadline.
	closing     context.Context
	stopClosing context.CancelFunc
}

// New builds the server and its routes; it does not listen yet.
func New(cfg Config, deps Deps) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:   cfg,
		store: deps.Store,
		queue: deps.Queue,
		log:   cfg.Logger,
		echo:  echo.New(),
	}
	// No notifier: the worker that takes the canceled job's task, which
	// stays queued, finds the job over and sends its webhook.
	s.ender = jobend.New(deps.Store, nil, cfg.Logger)
	s.deliveries = deps.Deliveries
	s.idempotency = deps.Idempotency
	s.targets = deps.Targets
	s.monitor = deps.Monitor
	s.templates, s.schedules, s.pinner = deps.Templates, deps.Schedules, deps.Pinner
	s.changePoints = deps.ChangePoints
	s.closing, s.stopClosing = context.WithCancel(context.Background())
	s.ready = newReadiness(deps.Store, cfg.Logger)
	s.undo = undo.New(s.closing, cfg.Logger)
	s.admit = newAdmitter(cfg, deps, s.undo)
	s.streams = newStreamHub(deps.Streams, deps.Store, cfg.MaxStreamsPerKey, cfg.MaxStreams, cfg.Logger)
	go s.streams.run(s.closing)
	s.metrics = newMetrics(deps.Store, deps.Inspector)
	s.metrics.registry.MustRegister(s.streams.gauge())
	s.auth = newAuthState(cfg.OpenUntilFirstKey, deps.Keys)
	s.hosts = newHostRule(cfg)
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.Use(
		middleware.RequestID(),
		s.metrics.middleware,
		s.requestLogger(),
		s.recoverer(),
		s.checkHost, // host.go: before anything reads or changes state
	)
	s.routes()
	s.http = &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the server's HTTP handler, for tests with httptest.
func (s *Server) Handler() http.Handler { return s.echo }

// Registry returns the Prometheus registry behind /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// Serve accepts connections on l until Shutdown; it returns nil after a
// graceful shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.auth.listening(l.Addr(), s.log)
	s.hosts.listening(l.Addr())
	if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api: serve: %w", err)
	}
	return nil
}

// Shutdown stops accepting connections and waits for requests in flight
// (event streams end when their request context is canceled) until ctx
// ends, then for the undo retries, which stop at their next attempt.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopClosing()
	if err := s.http.Shutdown(ctx); err != nil {
		return fmt.Errorf("api: shutdown: %w", err)
	}
	if err := s.undo.Wait(ctx); err != nil {
		return fmt.Errorf("api: shutdown: %w", err)
	}
	return nil
}

// newAdmitter is the job admission of a server built from cfg and deps:
// the same limits, quotas and address policy as the rest of the API.
func newAdmitter(cfg Config, deps Deps, u *undo.Undoer) *admit.Admitter {
	return admit.New(admit.Config{
		Limits: cfg.Limits,
		Quota: apikey.Quota{
			MaxActiveJobs:        cfg.MaxActiveJobs,
			SubmissionsPerMinute: cfg.SubmissionsPerMinute,
			MaxTemplates:         cfg.MaxTemplates,
			MaxTemplateBytes:     cfg.MaxTemplateBytes,
			MaxSchedules:         cfg.MaxSchedules,
			MaxPins:              cfg.MaxPins,
		},
		URLPolicy:     cfg.urlChecker,
		VerifyTargets: cfg.VerifyTargets,
		Log:           cfg.Logger,
	}, admit.Deps{
		Store: deps.Store, Queue: deps.Queue, Undo: u, Quotas: deps.Quotas, Secrets: deps.Deliveries,
		Targets: deps.Targets, Selector: deps.Selector, Keys: deps.Templates,
	})
}

// Admitter is how this server creates jobs, for the triggers beside it
// (the scheduler) to create theirs the same way.
func (s *Server) Admitter() *admit.Admitter { return s.admit }

// requestLogger logs one line per request with its id, route and status.
// Probes and scrapes that succeed are logged at DEBUG: a load balancer
// and Prometheus call them every few seconds for ever, and at INFO their
// lines drowned every other one.
func (s *Server) requestLogger() echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true,
		LogRequestID: true, LogRoutePath: true, HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if isProbe(v.RoutePath) && v.Status < http.StatusBadRequest {
				level = slog.LevelDebug
			}
			s.log.LogAttrs(c.Request().Context(), level, "http request",
				slog.String("request_id", v.RequestID),
				slog.String("method", v.Method),
				slog.String("path", v.URIPath),
				slog.String("route", v.RoutePath),
				slog.Int("status", v.Status),
				slog.Duration("latency", v.Latency),
			)
			return nil
		},
	})
}

// recoverer turns a panic into a logged 500 problem: the last line of
// defence, since no input should reach a panic.
func (s *Server) recoverer() echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("api: panic in handler", "request_id", requestID(c),
				"route", c.Path(), "err", err, "stack", string(stack))
			return fmt.Errorf("api: panic: %w", err)
		},
	})
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
