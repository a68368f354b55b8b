// Package dashboard is benchq's web dashboard under /ui/: the job list,
// a job's page (live while it runs, the report's charts and tables once it
// ended), the comparison of two jobs and a submit form, rendered on the
// server with html/template from embedded templates and assets, so it
// works offline and under a strict Content-Security-Policy.
//
// It holds no job logic of its own. Every fact it shows or changes goes
// through the API's own handler, in process, with the caller's key: who
// may see which job, what a valid spec is, quotas and rate limits are the
// API's, decided in one place. The package api authenticates the browser
// session and hands each request here with the caller's credentials
// (WithCaller); the report views come from internal/report and the
// comparison from analysis.AnalyzeAgainst.
package dashboard
