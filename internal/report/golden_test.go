package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// render writes the fixture job in format f.
func render(t *testing.T, f Format) []byte {
	t.Helper()
	j := fixtureJob()
	runs := fixtureRuns(j)
	var buf bytes.Buffer
	if err := Write(&buf, f, j, runs, fixtureAnalysis(j, runs)); err != nil {
		t.Fatalf("Write(%s) = %v, want nil", f, err)
	}
	return buf.Bytes()
}

func goldenName(f Format) string {
	return filepath.Join("testdata", "job."+f.Extension())
}

// TestWriteGolden pins every format's output for the fixture job; run
// `go test ./internal/report -update` after an intended change and read
// the diff.
func TestWriteGolden(t *testing.T) {
	for _, f := range Formats() {
		if f == FormatPNG {
			continue // rasterised text differs by platform; TestPNG checks the image
		}
		t.Run(string(f), func(t *testing.T) {
			got := render(t, f)
			path := goldenName(f)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Write(%s) differs from %s; rerun with -update and review the diff\ngot:\n%.2000s", f, path, got)
			}
		})
	}
}
