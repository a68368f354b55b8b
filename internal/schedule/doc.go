// Package schedule runs job templates on their cron schedules. Plan reads
// a template's schedule (a 5-field cron expression in an IANA time zone,
// a jitter, a missed-run policy) and says when its ticks fire; Scheduler
// evaluates every template's due ticks against a Clock and creates one job
// per tick through a Runner, however many schedulers run: each tick is
// claimed in Redis (store.ClaimTick) before anything happens, and only
// the claimer acts on it. A tick whose previous job is still queued or
// running is skipped and recorded so.
package schedule
