// Package report renders a whole job — its spec, every stored run and the
// job-level analysis (aggregates over repeats, baseline comparison,
// saturation, verdict) — in the formats users of ab and its kin expect: ab
// and http_load text per run, JSON, CSV with one row per run, Markdown
// tables laid out like the hand-made comparisons in seeds/003 (rows =
// targets, columns = concurrency), a chart as SVG or PNG, one
// self-contained HTML page and a gnuplot data file; and per run, its
// timeline (one CSV row or NDJSON line per interval, runtimeline.go) and
// its latency distribution in HdrHistogram's .hgrm text (hgrm.go); and the
// verdict as JUnit XML for CI dashboards, a testsuite per target and a
// testcase per threshold and cell (junit.go, in the shape of Jenkins'
// junit-10.xsd, which internal/junittest validates it against).
//
// It sits above internal/job and internal/abreport: abreport renders one run
// and cannot know about jobs (job imports it), so everything that spans runs
// lives here. The API serves Write's output on GET /v1/jobs/{id}/report and
// `benchq report` fetches it.
//
// The chart (gonum/plot, drawn once and written through vgsvg or vgimg)
// holds one row of two panels per request count, duration or rate of the
// sweep: mean req/s bars per target per concurrency, and each target's mean
// p50 (circle) and p99 (triangle) latency on a log axis, joined by lines
// when there is more than one concurrency level. Error bars are ± 1 sample
// standard deviation over repeats, and the caption says so. Every value of
// the sweep gets its own row rather than only the first, so nothing
// measured is hidden.
//
// Each run has two charts of its own (WriteRunChart, SVG or PNG, the run
// chosen with SelectRun): its timeline — successful requests and errors per
// second as separate lines (an error is never throughput), the open model's
// intended and achieved rates, and each interval's p50, p90 and p99 on a log
// axis, against time — from the run's stored measurement; and its latency
// distribution, latency against percentile on a log "nines" axis as
// HdrHistogram's plotter draws a .hgrm file, from the run's full histogram
// (in the open model beside the uncorrected one).
//
// The HTML page is html/template over an embedded stylesheet, with the SVG
// inline and each run's ab text folded in <details>: one file to attach to
// a ticket, that requests nothing from anywhere. It draws the runs' charts
// inline too, folded past a few runs; a sweep of many runs has at most
// maxChartedRuns of them drawn, coarser, so the file stays bounded.
package report
