// Package api is benchq's HTTP interface: an echo v4 server that accepts
// benchmark jobs, and serves their status, results and progress events,
// plus health, readiness, Prometheus metrics and the OpenAPI document with
// Swagger UI. It is the front door of job creation: it decodes the
// request, authenticates the caller, hands the spec to internal/admit
// (which validates, applies quotas, stores and enqueues) and renders
// what admit refuses as a problem.
//
// Handlers depend on the small JobStore interface declared here and on
// queue.Enqueuer (declared once beside the tasks it carries), not on the
// Redis store or the asynq client, so they can be tested with fakes. Every error leaves as RFC 9457 application/problem+json; one
// table in problem.go maps domain errors to statuses and problem types, and
// internal errors are logged with the request id, never echoed. A Redis
// outage (store.ErrUnavailable) is a 503 with Retry-After on every route,
// and a write it interrupts is undone (internal/undo).
//
// Event streams (events.go) hold no Redis connection while they wait: the
// process's one notice subscription wakes the streams of a job that got
// an event, and a hub (streams.go) caps open streams per key and per
// process and ends those of revoked keys.
package api
