// Package forge sends a job's result back to where its commit lives: a
// commit status on GitHub or GitLab (pending when the job starts;
// success, failure or error when it ends, linking the job) and, for a
// pull or merge request, one comment holding the job's Markdown report,
// found again by a hidden marker line and updated in place by later jobs
// of the same request and context (always, on_change or never).
//
// Messages builds what a job sends from its notify; each is kept as a
// delivery of the job (internal/store) and sent, retried and logged by
// the webhook delivery server (worker/forge.go), so a forge's attempts
// sit in the job's delivery log beside its webhook's. Client.Send makes
// one attempt with the token it is given (the service's or the
// template's) and judges it: delivered, retry (no answer, 5xx, 429, a
// rate limit, with the wait the forge asked for) or rejected. GitHub is
// spoken through google/go-github, the only package that imports it.
// Every connection goes through the dial function the Client is given.
package forge
