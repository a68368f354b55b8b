package main

import (
	"context"
	"fmt"
	"net"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/forge"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
	"github.com/benchq/benchq/worker"
)

// startWebhooks starts the webhook delivery server of a worker process (its
// own asynq server on the webhooks queue) until ctx ends, and returns the
// notifier the job runner tells when a job starts and ends.
func (m *Main) startWebhooks(ctx context.Context, st *store.Store) worker.Notifier {
	c := m.Config
	schedule := webhook.Schedule(c.WebhookBackoff) // nil: the day-long default
	// Every connection to a receiver goes through the address policy, as
	// the load's do (policy.go).
	dial := m.guardedDial()
	fc := m.forgeClient()
	hooks := worker.NewWebhooks(m.rdb, st, worker.WebhookConfig{
		Concurrency: c.WebhookConcurrency,
		PerOwner:    c.WebhookPerOwner,
		Schedule:    schedule,
		Timeout:     c.WebhookTimeout,
		Dial:        dial,
		Logger:      m.Logger,
		Forge:       fc,
		ForgeTokens: map[string]string{job.ForgeGitHub: c.GitHubToken.Reveal(), job.ForgeGitLab: c.GitLabToken.Reveal()},
	})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := hooks.Run(ctx); err != nil && ctx.Err() == nil {
			m.failed <- fmt.Errorf("benchq: webhooks: %w", err)
		}
	}()
	q := m.queue
	if q == nil { // a worker-only process
		q = asynq.NewClientFromRedisClient(m.rdb)
	}
	return worker.NewWebhookNotifier(st, q, worker.NotifierConfig{
		Schedule: schedule,
		LinkBase: m.linkBase(),
		Logger:   m.Logger,
		Forge:    fc,
	})
}

// forgeClient is the client of the forges jobs' notify goes to. Their
// API URLs are the operator's own setting, as the Redis URL is, so they
// are dialed as configured rather than through the address policy that
// keeps tenants' targets and webhooks off private addresses: a GitHub
// Enterprise Server on the company network is reachable, and a tenant
// names only a repository, a commit and a request, which become path
// segments checked by job.Spec.Validate. Redirects are not followed.
func (m *Main) forgeClient() *forge.Client {
	c := m.Config
	d := &net.Dialer{Timeout: c.WebhookTimeout}
	fc, err := forge.New(forge.Config{GitHubURL: c.GitHubAPIURL, GitLabURL: c.GitLabAPIURL, Dial: d.DialContext, Timeout: c.WebhookTimeout})
	if err != nil { // config.Load refuses such URLs first
		m.Logger.Error("benchq: jobs' notify statuses and comments will not be sent", "err", err)
		return nil
	}
	return fc
}

// linkBase is what the links in webhook payloads start with: the
// configured public URL; else, in a process serving the API on a concrete
// address (all-in-one), that address; else nothing, and links stay
// relative, which a receiver cannot follow: a worker cannot know where the
// API is, so it says so.
func (m *Main) linkBase() string {
	if m.Config.PublicURL != "" {
		return m.Config.PublicURL
	}
	if m.listener != nil {
		if a, ok := m.listener.Addr().(*net.TCPAddr); ok && !a.IP.IsUnspecified() {
			return m.URL()
		}
	}
	m.Logger.Warn("benchq: no --public-url (BENCHQ_PUBLIC_URL): webhook payloads will carry relative links")
	return ""
}
