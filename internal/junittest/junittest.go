package junittest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// limit bounds one run of xmllint or node: both answer in well under a
// second, and a hung one must not hold the test to go test's timeout.
const limit = time.Minute

// testdata is this package's testdata directory, found from this file's
// path, since the tests that call in run in their own package's
// directory.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// SchemaPath is the JUnit XSD documents are validated against.
func SchemaPath() string { return filepath.Join(testdata(), "junit-10.xsd") }

// ParserDir is the npm project of the JUnit parser Parse runs.
func ParserDir() string { return filepath.Join(testdata(), "parser") }

// missing skips the test for a tool that is not installed, or fails it
// under CI=true, where .ci/run installs it and its absence is a broken
// setup rather than a choice.
func missing(t testing.TB, what, install string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("junittest: %s is missing under CI (%s)", what, install)
	}
	t.Skipf("junittest: %s is missing (%s); skipping", what, install)
}

// Validate fails the test unless doc is valid against SchemaPath, as
// xmllint --schema checks it, with xmllint's complaints in the message.
func Validate(t testing.TB, doc []byte) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		missing(t, "xmllint", "apt-get install libxml2-utils")
	}
	if err := validate(t.Context(), xmllint, writeTemp(t, doc)); err != nil {
		t.Fatalf("junittest: the document is not valid JUnit: %v\n%s", err, doc)
	}
}

// validate runs xmllint on path; the error holds what xmllint printed.
func validate(ctx context.Context, xmllint, path string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := exec.CommandContext(ctx, xmllint, "--noout", "--nonet", "--schema", SchemaPath(), path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("xmllint --schema %s: %w\n%s", filepath.Base(SchemaPath()), err, bytes.TrimSpace(out))
	}
	return nil
}

// Result is what the npm parser read from a document: its totals, and each
// suite with its cases. Status is PASS, FAIL or SKIP, as the parser
// writes it.
type Result struct {
	Name string `json:"name"`
	Counts
	Suites []Suite `json:"suites"`
}

// Counts are the parser's totals of a document or a suite.
type Counts struct {
	Total   int    `json:"total"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Errors  int    `json:"errors"`
	Skipped int    `json:"skipped"`
	Status  string `json:"status"`
}

// Suite is one testsuite as the parser read it; Metadata holds its
// properties.
type Suite struct {
	Name string `json:"name"`
	Counts
	Metadata map[string]string `json:"metadata"`
	Cases    []Case            `json:"cases"`
}

// Case is one testcase: Failure is its failure's message.
type Case struct {
	Name       string  `json:"name"`
	Status     string  `json:"status"`
	Failure    string  `json:"failure"`
	DurationMs float64 `json:"duration_ms"`
}

// Parse reads doc with test-results-parser (an npm JUnit reader, see
// testdata/README.md) under node, as a CI result publisher reads a
// report. It skips without node or the installed parser, and fails under
// CI=true.
func Parse(t testing.TB, doc []byte) Result {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node", "apt-get install nodejs npm")
	}
	if _, err := os.Stat(filepath.Join(ParserDir(), "node_modules", "test-results-parser")); err != nil {
		missing(t, "the npm JUnit parser", "npm ci --prefix "+ParserDir())
	}
	r, err := parse(t.Context(), node, writeTemp(t, doc))
	if err != nil {
		t.Fatalf("junittest: %v\n%s", err, doc)
	}
	return r
}

func parse(ctx context.Context, node, path string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "parse.js", path)
	cmd.Dir = ParserDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("node parse.js: %w\n%s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		return Result{}, fmt.Errorf("node parse.js printed no result: %w\n%s", err, out)
	}
	return r, nil
}

func writeTemp(t testing.TB, doc []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
