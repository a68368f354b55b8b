// Reads one JUnit XML file with test-results-parser, as a CI result
// publisher does, and prints the counts and cases it found as JSON.
"use strict";
const { parse } = require("test-results-parser");

const file = process.argv[2];
if (!file) {
  console.error("usage: node parse.js FILE.xml");
  process.exit(2);
}
const r = parse({ type: "junit", files: [file] });
const counts = (x) => ({
  total: Number(x.total),
  passed: Number(x.passed),
  failed: Number(x.failed),
  errors: Number(x.errors),
  skipped: Number(x.skipped),
  status: String(x.status),
});
process.stdout.write(JSON.stringify({
  name: String(r.name),
  ...counts(r),
  suites: r.suites.map((s) => ({
    name: String(s.name),
    ...counts(s),
    metadata: Object.fromEntries(Object.entries(s.metadata).map(([k, v]) => [k, String(v)])),
    cases: s.cases.map((c) => ({
      name: String(c.name),
      status: String(c.status),
      failure: c.failure ? String(c.failure) : "",
      duration_ms: Number(c.duration),
    })),
  })),
}));
