package admit

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/benchq/benchq"

// TestAdmissionStaysOutOfHTTP keeps job admission reachable from every
// trigger without the HTTP server: admit imports neither the API nor an
// HTTP framework, and the triggers beside the API (the scheduler, the
// CI hook parsers) do not import the API to create jobs.
func TestAdmissionStaysOutOfHTTP(t *testing.T) {
	for _, tc := range []struct {
		pkg       string
		forbidden []string
	}{
		{module + "/internal/admit", []string{module + "/api", "github.com/labstack/echo", "github.com/valyala/fasthttp"}},
		{module + "/internal/schedule", []string{module + "/api"}},
		{module + "/internal/cihook", []string{module + "/api"}},
	} {
		for _, dep := range deps(t, tc.pkg) {
			for _, f := range tc.forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s (through go list -deps), which it must not", tc.pkg, dep)
				}
			}
		}
	}
}

// deps lists every package pkg imports, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	list := strings.Fields(string(out))
	if len(list) < 2 {
		t.Fatalf("go list -deps %s listed %q, want the package and its imports", pkg, list)
	}
	return list
}
