package store

// Key builders for the external tests, which check what Redis holds.
var (
	JobKey           = jobKey
	RunsKey          = runsKey
	LeaseKey         = leaseKey
	WebhookSecretKey = webhookSecretKey
	DeliveriesKey    = deliveriesKey
	AttemptsKey      = attemptsKey
	AllIndexKey      = allIndexKey
	StatusIndexKey   = statusIndexKey
)
var IndexMember = indexMember
var TaggedName = taggedName
