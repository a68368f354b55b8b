package admit

import "time"

// Via names the kind of thing that started a job.
type Via string

// The ways a job begins.
const (
	// ViaAPI: POST /v1/jobs.
	ViaAPI Via = "api"
	// ViaIdempotentAPI: POST /v1/jobs with an Idempotency-Key, the
	// request that claimed the key.
	ViaIdempotentAPI Via = "idempotent-api"
	// ViaDashboard: the dashboard's submit form.
	ViaDashboard Via = "dashboard"
	// ViaTemplateRun: POST /v1/templates/{name}/run.
	ViaTemplateRun Via = "template-run"
	// ViaHook: a CI delivery (Provider, Delivery).
	ViaHook Via = "hook"
	// ViaSchedule: a template schedule's tick (Tick).
	ViaSchedule Via = "schedule"
)

// Source is how a job came to be created. It names the creation in the
// logs and in the record of an undone creation; what the job itself
// keeps of its origin is its labels (a template's name, a trigger's
// repository, branch and commit, trigger=schedule), which the template
// run that created it set.
type Source struct {
	Via Via
	// RequestID is the HTTP request that carried the creation, if any.
	RequestID string
	// Provider ("github", "gitlab") and Delivery (its delivery id) name
	// a CI delivery.
	Provider, Delivery string
	// Tick is the schedule tick that fired.
	Tick time.Time
}

// String names the creation for a person reading the logs:
// "request <id>", "github delivery <id> (request <id>)",
// "schedule tick 2026-01-02T03:04:00Z".
func (s Source) String() string {
	req := "request " + s.RequestID
	switch s.Via {
	case ViaHook:
		return s.Provider + " delivery " + s.Delivery + " (" + req + ")"
	case ViaSchedule:
		return "schedule tick " + s.Tick.UTC().Format(time.RFC3339)
	case ViaIdempotentAPI:
		return "idempotent " + req
	case ViaDashboard:
		return "dashboard " + req
	case ViaTemplateRun:
		return "template run " + req
	}
	return req
}
