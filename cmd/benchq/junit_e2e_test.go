package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/junittest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestJUnitOfAFailingJob: a real job (redis-server, the worker, a loopback
// target taking 2 ms an answer) with one threshold it cannot meet and one
// it meets, submitted with `benchq submit --wait --junit FILE`: submit
// exits 1 for the failed verdict and still writes FILE; the file is valid
// against Jenkins' published junit-10.xsd (xmllint) and an npm JUnit
// parser counts its testcases and failures right; the API serves the same
// document as application/xml, and `benchq report --format junit` too.
func TestJUnitOfAFailingJob(t *testing.T) {
	m := startOnRedis(t)
	base := m.URL()
	tg := testservers.StartTarget(t, "ok", 2*time.Millisecond)
	dir := t.TempDir()
	spec, _ := json.Marshal(map[string]any{
		"name":       "junit gate",
		"targets":    []map[string]any{{"name": "slow", "url": tg.URL}},
		"request":    map[string]any{"keepalive": true},
		"sweep":      map[string]any{"concurrency": []int{1, 2}, "requests": []int{40}},
		"thresholds": []string{"p99_ms < 0.5", "failed_ratio < 0.5"},
	})
	specPath, junitPath := filepath.Join(dir, "job.json"), filepath.Join(dir, "TEST-benchq.xml")
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"submit", specPath, "--wait", "--timeout", "60s", "--junit", junitPath, "--server", base}
	if got := run(t.Context(), args, nil, &stdout, &stderr); got != clicmd.ExitThresholdFailed {
		t.Fatalf("benchq %q = exit %d, want %d (verdict fail); stderr:\n%s", args, got, clicmd.ExitThresholdFailed, stderr.String())
	}
	if !strings.Contains(stderr.String(), "wrote "+junitPath) {
		t.Errorf("stderr = %q, want it to say it wrote %s", stderr.String(), junitPath)
	}
	doc, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatalf("--junit file after a failed verdict: %v", err)
	}

	junittest.Validate(t, doc)
	r := junittest.Parse(t, doc)
	// Two cells (c=1, c=2), each judged by the two thresholds and by the
	// rule that some request succeeds: 6 cases, the p99 one failing in
	// both.
	if r.Total != 6 || r.Failed != 2 || r.Errors != 0 || r.Passed != 4 || r.Status != "FAIL" || len(r.Suites) != 1 {
		t.Fatalf("parsed %+v, want 6 tests, 2 failed, 0 errors, 4 passed in one suite", r.Counts)
	}
	s := r.Suites[0]
	failing := 0
	for _, c := range s.Cases {
		if c.Status != "FAIL" {
			continue
		}
		failing++
		if !strings.HasPrefix(c.Name, "p99_ms < 0.5 · c=") || !strings.Contains(c.Failure, " ms, want < 0.5 ms (mean of 1 repeat)") {
			t.Errorf("failing case %q: %q, want the p99 threshold naming the value and the bound", c.Name, c.Failure)
		}
	}
	if s.Name != "slow" || len(s.Cases) != 6 || failing != 2 {
		t.Errorf("suite %q with %d cases, %d failing; want slow, 6, 2", s.Name, len(s.Cases), failing)
	}
	id := s.Metadata["job_id"]
	if id == "" || s.Metadata["verdict"] != "fail" || s.Metadata["c=1 n=40 repeats"] != "1" || s.Metadata["c=2 n=40 p99_ms"] == "" {
		t.Fatalf("properties = %v, want the job's id, its verdict and each cell's numbers", s.Metadata)
	}
	t.Logf("job %s: p99 at c=1 %s ms, at c=2 %s ms", id, s.Metadata["c=1 n=40 p99_ms"], s.Metadata["c=2 n=40 p99_ms"])

	resp, body := call(t, http.MethodGet, base+"/v1/jobs/"+id+"/report?format=junit", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/xml" ||
		resp.Header.Get("Content-Disposition") != `inline; filename="`+id+`.xml"` || !bytes.Equal(body, doc) {
		t.Errorf("GET report?format=junit = %d %q %q, want 200 application/xml %s.xml with the --junit file's bytes",
			resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), id)
	}
	stdout.Reset()
	stderr.Reset()
	if got := run(t.Context(), []string{"report", id, "--format", "junit", "--server", base}, nil, &stdout, &stderr); got != clicmd.ReportExitOK || !bytes.Equal(stdout.Bytes(), doc) {
		t.Errorf("benchq report --format junit = exit %d, %d bytes (stderr %q); want 0 and the --junit file's bytes", got, stdout.Len(), stderr.String())
	}
}
