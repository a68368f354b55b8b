// Package job holds benchq's business rules for a benchmark job: the spec a
// client submits, its strict decoding, defaults and validation, the
// expansion of a sweep into points and runs, the translation of a point
// into a load plan, IDs and the lifecycle of a job, and the types of the
// Analysis a finished job keeps. Computing that analysis (repeat
// statistics, comparisons, saturation, significance, the verdict, trends)
// is internal/analysis's, which imports this package and never the other
// way round. It knows nothing of HTTP handlers, Redis or asynq.
//
// The API does, in this order: Decode (shape: JSON syntax, unknown fields,
// types, the number of entries of each list and map, each problem named by
// its path, read without building the document so a spec costs a few
// times its size), WithDefaults, Validate (meaning:
// schemes, the address policy, limits, ab's rules), then stores the
// defaulted spec and enqueues the job with its Estimate; what reads a
// stored job takes its spec as stored, defaulted. The worker builds one
// Planner per attempt, which parses each target once, walks its Schedule,
// and for each run turns its Point into a measure.Plan with Planner.Plan;
// when the job ends it stores analysis.Analyze's verdict. What is shown of a job
// (API answers, reports) is its spec's Redacted copy: the stored spec keeps
// the credentials the worker must send.
//
// A target is a URL, an ab command line or http_load flags with a URL
// list. Concurrency, and the requests/duration/rate group, each come from
// the job's sweep when it lists values, else from the target's own flags
// (ab -c -n -t, http_load -parallel -fetches -seconds -rate), else from the
// defaults (concurrency 1, 100 requests). So a job of ab lines runs each as
// ab would, and adding "sweep": {"concurrency": [...]} sweeps all of them.
package job
