package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// TestDockerignoreKeepsTheBuild reads .dockerignore with the matcher
// Docker's builder uses: every file the Dockerfile's `go build
// ./cmd/benchq` compiles (each Go file of each package of the module it
// depends on, go.mod, go.sum) stays in the build context, and local state
// (git history, test binaries, bench output) stays out of it.
func TestDockerignoreKeepsTheBuild(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	list := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}{{end}}`, "./cmd/benchq")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	needed := []string{"go.mod", "go.sum", "Dockerfile"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		dir, err := filepath.Rel(root, fields[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range fields[1:] {
			needed = append(needed, filepath.ToSlash(filepath.Join(dir, name)))
		}
	}
	if len(needed) < 20 {
		t.Fatalf("go list named %d files, want the packages of benchq", len(needed))
	}
	for _, p := range needed {
		if ignored, err := pm.MatchesOrParentMatches(p); err != nil || ignored {
			t.Errorf(".dockerignore leaves %s out of the build context (err %v)", p, err)
		}
	}
	for _, p := range []string{".git/HEAD", "cmd/benchq/benchq.test", "bench/out/run.json", "benchq"} {
		if ignored, err := pm.MatchesOrParentMatches(p); err != nil || !ignored {
			t.Errorf(".dockerignore sends %s to the builder, want it left out (err %v)", p, err)
		}
	}
}
