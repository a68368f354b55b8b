package abcli

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

// The seed write-ups' files: a 25 600-byte image and two HTML pages.
var abSeedFiles = map[string]int{"test.jpg": 25600, "big.html": 49128, "small.html": 7638}

// seedFiles returns abSeedFiles' contents and the body of a POST.
func seedFiles() testservers.Files {
	files := testservers.Files{"post.txt": []byte("name=benchq&value=42\n")}
	for name, size := range abSeedFiles {
		files[name] = []byte(strings.Repeat("<p>benchq</p>\n", size/14+1))[:size]
	}
	return files
}

// TestABConformance runs real ab and `benchq ab` with the same arguments
// against the same local nginx and compares their stdout with every number
// masked: the lines must be identical. Counters that do not depend on
// timing must be equal outright.
func TestABConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance against real ab and nginx: skipped with -short")
	}
	testservers.Require(t, "ab", "apache2-utils")
	srv := testservers.Nginx(t, seedFiles())
	base := srv.URL
	post := filepath.Join(srv.Dir, "www", "post.txt")
	tests := []struct {
		name  string
		args  []string
		exact bool // -n run: counts must match ab's and -n
	}{
		{"plain", []string{"-n", "2000", "-c", "10", base + "/test.jpg"}, true},
		{"keepalive", []string{"-k", "-n", "2000", "-c", "10", base + "/big.html"}, true},
		{"404", []string{"-n", "2000", "-c", "10", base + "/missing.html"}, true},
		{"timelimit", []string{"-t", "1", "-c", "10", base + "/small.html"}, false},
		{"post", []string{"-n", "2000", "-c", "10", "-p", post, "-T", "text/plain", base + "/post"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			abOut, abErr := runRealAB(t, tt.args)
			code, out, errOut := runABTest(t, context.Background(), tt.args...)
			if code != 0 {
				t.Fatalf("benchq ab %q exit = %d, want 0; stderr:\n%s", tt.args, code, errOut)
			}
			compareMasked(t, "stdout", abOut, out)
			if !tt.exact {
				// How many heartbeat lines a timed run prints depends on
				// its speed; only the last line's shape is ab's.
				lastLine := func(s string) string {
					lines := maskAB(strings.TrimSpace(s))
					return lines[len(lines)-1]
				}
				if got, want := lastLine(errOut), lastLine(abErr); got != want {
					t.Errorf("benchq ab %q: last stderr line %q, ab %q", tt.args, got, want)
				}
				return
			}
			compareMasked(t, "stderr", abErr, errOut)
			if got := abField(out, "Complete requests"); got != "2000" {
				t.Errorf("benchq ab %q: Complete requests %s, want 2000", tt.args, got)
			}
			for _, label := range []string{"Complete requests", "Failed requests", "Non-2xx responses",
				"Keep-Alive requests", "Document Length", "Total transferred", "HTML transferred", "Total body sent"} {
				if want, got := abField(abOut, label), abField(out, label); got != want {
					t.Errorf("benchq ab %q: %s %q, ab %q", tt.args, label, got, want)
				}
			}
		})
	}
}

func runRealAB(t *testing.T, args []string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	cmd := exec.CommandContext(ctx, "ab", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("ab %q: %v; stderr:\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

var abNumber = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// maskAB removes what legitimately differs between two runs: numbers (and
// the padding that aligns them) and ab's SANE warnings, which depend on
// the timings of the run.
func maskAB(s string) []string {
	var lines []string
	skipNext := false
	for _, line := range strings.Split(s, "\n") {
		switch {
		case skipNext:
			skipNext = false
			continue
		case strings.HasPrefix(line, "WARNING: The median and mean"), strings.HasPrefix(line, "ERROR: The median and mean"):
			skipNext = true // and its second line
			continue
		}
		lines = append(lines, strings.Join(strings.Fields(abNumber.ReplaceAllString(line, "N")), " "))
	}
	return lines
}

func compareMasked(t *testing.T, what, ab, benchq string) {
	t.Helper()
	want, got := maskAB(ab), maskAB(dropClientWarning(benchq))
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("%s line %d (numbers masked): benchq %q, ab %q\n--- ab:\n%s\n--- benchq:\n%s", what, i+1, g, w, ab, benchq)
			return
		}
	}
}

// dropClientWarning removes the one line benchq may add after ab's report,
// the warning that the load generator was short of CPU: whether it appears
// depends on how busy this machine is, not on ab's format.
func dropClientWarning(out string) string {
	body, last, found := strings.Cut(out, "\nWARNING: the load generator ")
	if !found || strings.Count(last, "\n") > 1 {
		return out // absent, or not the last line
	}
	return body + "\n"
}

// abField returns the value of the report line "label: value".
func abField(report, label string) string {
	for _, line := range strings.Split(report, "\n") {
		if rest, ok := strings.CutPrefix(line, label+":"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
