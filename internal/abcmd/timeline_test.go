package abcmd

import (
	"errors"
	"testing"
)

// TestParseABTimeline: --timeline names the NDJSON file, joined or apart,
// survives Args, and must name one.
func TestParseABTimeline(t *testing.T) {
	for _, args := range [][]string{
		{"--timeline", "t.ndjson", "-n", "5", "http://127.0.0.1:1/"},
		{"--timeline=t.ndjson", "-n", "5", "http://127.0.0.1:1/"},
	} {
		a, err := ParseAB(args)
		if err != nil {
			t.Fatalf("ParseAB(%q) = %v", args, err)
		}
		if a.TimelineFile != "t.ndjson" {
			t.Errorf("ParseAB(%q).TimelineFile = %q, want t.ndjson", args, a.TimelineFile)
		}
		again, err := ParseAB(a.Args())
		if err != nil || again.TimelineFile != "t.ndjson" {
			t.Errorf("ParseAB(Args() = %q) = %v, %v; want the same file", a.Args(), again, err)
		}
	}
	var ue *UsageError
	if _, err := ParseAB([]string{"--timeline=", "http://127.0.0.1:1/"}); !errors.As(err, &ue) {
		t.Errorf("ParseAB(--timeline=) = %v, want a usage error", err)
	}
	if _, err := ParseAB([]string{"-n", "5", "http://127.0.0.1:1/", "--timeline"}); err == nil {
		t.Errorf("ParseAB(… --timeline) without a file = nil error, want one")
	}
}
