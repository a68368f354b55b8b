package errcode

// The codes, one per kind of problem. Each is also the last segment of
// the API's problem type URI, except where the API says otherwise.
const (
	// The input.
	MalformedBody    Code = "malformed-body"
	BodyTooLarge     Code = "body-too-large"
	InvalidSpec      Code = "validation"
	InvalidTarget    Code = "invalid-target"
	TargetUnverified Code = "target-unverified"
	BadQuery         Code = "bad-query"
	InvalidCursor    Code = "invalid-cursor"
	UnsupportedMedia Code = "unsupported-media-type"

	// Who asks, and from where.
	Unauthorized       Code = "unauthorized"
	Forbidden          Code = "forbidden"
	CrossSiteRequest   Code = "cross-site-request"
	MisdirectedRequest Code = "misdirected-request"
	BadSignature       Code = "bad-signature"

	// What exists.
	NotFound         Code = "not-found"
	Conflict         Code = "conflict"
	JobFinished      Code = "job-finished"
	TemplateExists   Code = "template-exists"
	DeliveryInFlight Code = "delivery-in-flight"
	NoDeliveryID     Code = "delivery-id-required"

	// Idempotent requests.
	BadIdempotencyKey     Code = "bad-idempotency-key"
	IdempotencyConflict   Code = "idempotency-conflict"
	IdempotencyInProgress Code = "idempotency-in-progress"

	// Quotas and limits.
	TooManyActiveJobs   Code = "too-many-active-jobs"
	RateLimited         Code = "rate-limited"
	TooManyStreams      Code = "too-many-streams"
	TooManyTemplates    Code = "too-many-templates"
	TemplateBytes       Code = "template-bytes-exceeded"
	TooManySchedules    Code = "too-many-schedules"
	TooManyPins         Code = "too-many-pins"
	RepositoryTemplates Code = "repository-templates-exceeded"

	// The service.
	StoreUnavailable Code = "store-unavailable"
	Unavailable      Code = "unavailable"
)

// Codes lists every code, for tables keyed by code to be checked against.
func Codes() []Code {
	return []Code{
		MalformedBody, BodyTooLarge, InvalidSpec, InvalidTarget, TargetUnverified, BadQuery, InvalidCursor, UnsupportedMedia,
		Unauthorized, Forbidden, CrossSiteRequest, MisdirectedRequest, BadSignature,
		NotFound, Conflict, JobFinished, TemplateExists, DeliveryInFlight, NoDeliveryID,
		BadIdempotencyKey, IdempotencyConflict, IdempotencyInProgress,
		TooManyActiveJobs, RateLimited, TooManyStreams, TooManyTemplates, TemplateBytes, TooManySchedules, TooManyPins, RepositoryTemplates,
		StoreUnavailable, Unavailable,
	}
}
