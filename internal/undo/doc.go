// Package undo takes back what a request wrote before it failed: a job
// created half-way, an Idempotency-Key claimed for a job that was never
// made, a redelivery marked pending without its task. A failure half-way
// is most often Redis going away, so the undo that fails for that same
// reason is retried in the background until Redis answers, its time is
// up or the process shuts down; the log names what was left half-done.
package undo
