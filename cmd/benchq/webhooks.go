package main

import (
	"context"
	"fmt"
	"net"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/netguard"
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
	// Every connection to a receiver goes through the address policy,
	// once on the resolved IP and again in Control on the socket itself.
	dial := &netguard.Dialer{Policy: m.Policy, Dialer: &net.Dialer{Control: m.Policy.Control}}
	hooks := worker.NewWebhooks(m.rdb, st, worker.WebhookConfig{
		Concurrency: c.WebhookConcurrency,
		Schedule:    schedule,
		Timeout:     c.WebhookTimeout,
		Dial:        dial.DialContext,
		Logger:      m.Logger,
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
	})
}

// linkBase is the API's URL for the links in webhook payloads when this
// process serves the API on a concrete address; otherwise links stay
// relative.
func (m *Main) linkBase() string {
	if m.listener == nil {
		return ""
	}
	if a, ok := m.listener.Addr().(*net.TCPAddr); !ok || a.IP.IsUnspecified() {
		return ""
	}
	return m.URL()
}
