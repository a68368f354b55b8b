// Package metric is the one table of the metrics a job's results are read
// by: each metric's name as thresholds, trends and the trend page write
// it, its unit, which way is better, what it means, and how to read it
// from one run's ab-compatible result (abreport.Report). internal/job
// checks the metric names of a spec's thresholds and trend against it,
// internal/analysis reads each run's values through it, the API resolves
// a trend query's metric with it, and the dashboard's trend page offers
// the metrics it marks. It imports nothing of this project but abreport,
// so every one of them can.
package metric
