// Package job holds benchq's business rules for a benchmark job: the spec a
// client submits, its decoding, defaults and validation, the expansion of a
// sweep into points and runs, the translation of a point into a load plan,
// and (later) repeat aggregation, baseline comparison and threshold verdicts.
// It knows nothing of HTTP handlers, Redis or asynq.
package job
