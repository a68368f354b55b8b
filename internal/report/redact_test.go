package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// TestWriteRedactsSecrets: a report is an artifact (CI keeps report.json),
// so no format shows a target's credentials, while the JSON one shows
// where they were; and the job rendered keeps its real values.
func TestWriteRedactsSecrets(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	j.Spec.Request.Headers = map[string]string{"Authorization": "Bearer s3cr3t-job"}
	j.Spec.Targets[0].Request = &job.Request{Headers: map[string]string{"X-Api-Key": "s3cr3t-target"}}
	j.Spec.Targets[1].URL = "http://u:s3cr3t-url@127.0.0.1:8082/test.jpg"
	a := analysis.Analyze(j.Spec, runs)
	for _, f := range Formats() {
		var buf bytes.Buffer
		if err := Write(&buf, f, j, runs, a); err != nil {
			t.Fatalf("Write(%s) = %v", f, err)
		}
		if strings.Contains(buf.String(), "s3cr3t") {
			t.Errorf("the %s report shows a secret", f)
		}
		if f == FormatJSON && strings.Count(buf.String(), job.RedactedValue) != 2 {
			t.Errorf("the JSON report has %d %q, want 2 (job and target headers)", strings.Count(buf.String(), job.RedactedValue), job.RedactedValue)
		}
	}
	if j.Spec.Request.Headers["Authorization"] != "Bearer s3cr3t-job" {
		t.Errorf("Write changed the job's own spec: %v", j.Spec.Request.Headers)
	}
}
