package dashboard

import (
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/report"
)

// TestDownloadsListEveryFormat: the job page offers each report format
// once, under the report table's label.
func TestDownloadsListEveryFormat(t *testing.T) {
	var names []report.Format
	for _, d := range downloads() {
		f := report.Format(d.Name)
		if d.Label == "" || d.Label != f.Label() {
			t.Errorf("download %s labelled %q, want %q", d.Name, d.Label, f.Label())
		}
		names = append(names, f)
	}
	slices.Sort(names)
	want := report.Formats()
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("downloads = %q, want every format %q once", names, want)
	}
}
