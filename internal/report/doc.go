// Package report renders a whole job — its spec, every stored run and the
// job-level analysis (aggregates over repeats, baseline comparison,
// saturation, verdict) — in the formats users of ab and its kin expect: ab
// and http_load text per run, JSON, CSV with one row per run, Markdown
// tables laid out like the hand-made comparisons in seeds/003 (rows =
// targets, columns = concurrency), an SVG chart and a gnuplot data file.
//
// It sits above internal/job and internal/abreport: abreport renders one run
// and cannot know about jobs (job imports it), so everything that spans runs
// lives here. The API serves Write's output on GET /v1/jobs/{id}/report and
// `benchq report` fetches it.
//
// The SVG document holds one row of two plots per request count, duration or
// rate of the sweep: a grouped bar chart of mean req/s against concurrency
// (one bar per target per concurrency) and a line chart of the mean p50
// (solid) and p99 (dashed) latency against concurrency per target. Every
// value of the sweep gets its own row rather than only the first, so nothing
// measured is hidden.
package report
