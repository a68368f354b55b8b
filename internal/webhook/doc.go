// Package webhook implements benchq's side of Standard Webhooks
// (standardwebhooks.com): per-job secrets ("whsec_" + base64), the v1
// HMAC-SHA256 signature over "id.timestamp.body", the JSON payload a
// receiver gets when a job starts or ends (kept under MaxPayloadBytes), the
// retry schedule with jitter and Retry-After, and one delivery attempt over
// HTTP with its outcome sorted into delivered, retry or gone. It holds no
// state: the delivery records live in internal/store and the retries are
// asynq's, driven by worker/webhook.go. The HTTP client it builds dials only
// through the dial function it is given, which is where the address policy
// (internal/netguard) is enforced on every connection.
package webhook
