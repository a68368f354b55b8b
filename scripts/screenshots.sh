#!/usr/bin/env bash
# Regenerates the dashboard screenshots under docs/ (ui-jobs.png, ui-job.png,
# ui-job-running.png, ui-job-live.png, ui-job-timeline.png, ui-compare.png, ui-phone.png, ui-trends.png) by running
# the Chromium tests with BENCHQ_SCREENSHOTS set: the pictures are of the real service,
# real jobs against loopback targets, in a real headless Chromium.
# Needs redis-server and chromium (apt-get install -y redis-server chromium).
# Usage: scripts/screenshots.sh [output-dir]   (default: docs)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(cd "${1:-docs}" && pwd)"
BENCHQ_SCREENSHOTS="$out" go test -count=1 -run '^(TestDashboardInChromium|TestLiveChartInChromium|TestTrendFailsSlowerRun)$' ./cmd/benchq/
ls -l "$out"/ui-*.png
