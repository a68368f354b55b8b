// Package browsertest starts a real headless Chromium for tests through
// chromedp: one place that finds the browser, skips when there is none on
// a developer's machine and fails under CI (CI=true), where .ci/run
// installs it.
package browsertest
