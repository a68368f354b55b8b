package webhook

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestPayloadGolden pins the webhook body receivers parse: a change to it
// shows up as a diff of testdata/job.succeeded.golden.json.
func TestPayloadGolden(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 5, 6, 0, time.UTC)
	b, err := Encode(NewPayload("job.succeeded", finishedJob(), analysis(2), "http://127.0.0.1:8080", now))
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "job.succeeded.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("payload differs from %s (go test -update rewrites it):\n%s", path, pretty.Bytes())
	}
}
