package measure_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVocabularyOnlyPackagesDoNotLinkTheEngine keeps the packages that
// speak the engine's vocabulary (plans, measurements, reports) but never
// drive load free of fasthttp and of the engine, so the API and the job
// rules build and link without them.
func TestVocabularyOnlyPackagesDoNotLinkTheEngine(t *testing.T) {
	const mod = "github.com/benchq/benchq/"
	forbidden := []string{"github.com/valyala/fasthttp", mod + "internal/loadgen"}
	for _, pkg := range []string{"internal/measure", "internal/job", "internal/abreport", "internal/abcmd", "internal/report", "internal/jobend", "api"} {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 2 {
				t.Fatalf("go list -deps %s listed %q: not the package's dependencies", pkg, deps)
			}
			for _, dep := range deps {
				for _, f := range forbidden {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		})
	}
}
