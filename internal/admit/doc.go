// Package admit is how a job begins: the one room where a spec becomes
// a queued job, whatever started it (POST /v1/jobs, with or without an
// Idempotency-Key, the dashboard's form, a template run, a CI delivery,
// a schedule's tick).
//
// An Admitter creates a job for a Caller (the API key it belongs to,
// with its rights, quota and webhook secret) from a Source (what
// started it, for the logs). Create fills the spec's defaults, charges
// the submission rate, validates the spec against the caller's limits
// and the address policy, verifies its target hosts, pins compare_to to
// one job, takes an active-job slot, keeps the webhook secret, stores
// the job and enqueues it; a creation that fails half-way is undone
// (internal/undo), so it leaves no job, secret or slot behind.
// RunTemplate renders a template for its owner and creates its job the
// same way.
//
// What a caller did wrong, or may retry, is returned as an
// *errcode.Error; the API maps its code to a problem. The Admitter
// depends on small interfaces declared here (*store.Store implements
// them) and on nothing of HTTP: the package imports neither the API nor
// echo nor fasthttp, so a new trigger (a GitHub App, a chat command)
// calls it as the API does.
package admit
