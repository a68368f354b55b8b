// Package analysis computes what a job's runs mean: per point the
// statistics over its repeats (Analyze), the difference to another
// target's point and to the compare_to job's (compare, baseline), whether
// each difference is more than the noise of the repeats (significance,
// with false-discovery control over the job's comparisons), where each
// target stops scaling (saturation), and the verdict: the spec's
// thresholds, absolute or relative to the compare_to job, its trend
// against the template's earlier jobs, and the rule that some request of
// every run succeeds (NoSuccessRule). TrendSeries draws one metric across
// a template's jobs.
//
// It is pure: the same spec and runs, in any order, give the same
// Analysis, and it reads no store. The caller (internal/jobend) loads the
// compare_to job (Baseline) and the history; the results are
// internal/job's types (job.Analysis and what it holds), since a finished
// job keeps its analysis. Metric values are read from each run's result
// through internal/metric's table.
package analysis
