// Package jobend is the one place a job ends, for the worker (a sweep's
// end, a job given up on) and the API (a queued job canceled) alike: End
// loads the job's runs and its compare_to job once, analyzes them once
// (analysis.AnalyzeAgainst), stores that analysis with the terminal status in
// one store transaction (fenced by the attempt, when one ends it), then
// gives up the job's target leases (so the next job waiting for one of
// its hosts starts), appends job.finished, logs the end and notifies with
// that analysis. A
// finished job's verdict, results, report and webhook all come from the
// analysis stored here, so they agree, and keep agreeing after the
// compare_to job expired.
//
// A succeeded job of a template then looks for change points in the
// template's history (changepoints.go), records them, and has the new
// ones announced in its trend.change_point event; a failure there is only
// logged, as the job has ended.
//
// Analyze is the same analysis for a job still under way, computed when
// it is read.
package jobend
