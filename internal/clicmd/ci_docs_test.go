package clicmd

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-shellwords"
	"gopkg.in/yaml.v2"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/job"
)

// TestCIExamples parses docs/ci/github-actions.yml and gitlab-ci.yml as
// YAML, and checks every benchq command their scripts run against the
// CLI's own parsers: the service start, the healthchecks and the gate.
func TestCIExamples(t *testing.T) {
	t.Run("github-actions.yml", func(t *testing.T) {
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Name string            `yaml:"name"`
					Uses string            `yaml:"uses"`
					Run  string            `yaml:"run"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, "../../docs/ci/github-actions.yml", &wf)
		var scripts []string
		uploaded := false
		for _, st := range wf.Jobs["benchmark"].Steps {
			scripts = append(scripts, st.Run)
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") && strings.Contains(st.With["path"], "report.md") && strings.Contains(st.With["path"], "junit.xml") {
				uploaded = true
			}
		}
		checkScripts(t, scripts)
		if !uploaded {
			t.Error("no upload-artifact step uploads report.md and junit.xml")
		}
	})
	t.Run("gitlab-ci.yml", func(t *testing.T) {
		var ci map[string]struct {
			Script    []string `yaml:"script"`
			Artifacts struct {
				When    string   `yaml:"when"`
				Paths   []string `yaml:"paths"`
				Reports struct {
					JUnit string `yaml:"junit"`
				} `yaml:"reports"`
			} `yaml:"artifacts"`
		}
		readYAML(t, "../../docs/ci/gitlab-ci.yml", &ci)
		b := ci["benchmark"]
		checkScripts(t, b.Script)
		if b.Artifacts.When != "always" || !strings.Contains(strings.Join(b.Artifacts.Paths, " "), "report.md") {
			t.Errorf("artifacts = %+v, want report.md kept always", b.Artifacts)
		}
		if b.Artifacts.Reports.JUnit != "junit.xml" {
			t.Errorf("artifacts:reports:junit = %q, want the --junit file, junit.xml", b.Artifacts.Reports.JUnit)
		}
	})
}

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		t.Fatalf("%s is not YAML of the expected shape: %v", path, err)
	}
}

// checkScripts finds each benchq command line and checks its arguments;
// a script must start the service, wait for it, and run the gate.
func checkScripts(t *testing.T, scripts []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, script := range scripts {
		for _, args := range benchqCommands(t, script) {
			kind := checkBenchqArgs(t, args)
			seen[kind] = true
		}
	}
	for _, kind := range []string{"service", "healthcheck", "submit"} {
		if !seen[kind] {
			t.Errorf("no benchq %s command found in the scripts", kind)
		}
	}
}

// ciExpr is a CI template expression, e.g. ${{ github.run_id }}.
var ciExpr = regexp.MustCompile(`\$\{\{[^}]*\}\}`)

// shellOperator is a control or redirection operator at a line's start.
var shellOperator = regexp.MustCompile(`^[0-9]*[;&|<>]+`)

// shellFunc is the first or last line of a shell function definition.
var shellFunc = regexp.MustCompile(`^(\w+\(\) \{|\})$`)

// benchqCommands returns the arguments of every benchq invocation in a
// shell script: `benchq ARGS` or `docker run ... "$BENCHQ_IMAGE" ARGS`.
func benchqCommands(t *testing.T, script string) [][]string {
	t.Helper()
	script = strings.ReplaceAll(ciExpr.ReplaceAllString(script, "X"), "\\\n", " ")
	var cmds [][]string
	for line := range strings.SplitSeq(script, "\n") {
		line = strings.TrimSpace(line)
		if shellFunc.MatchString(line) {
			continue // a function's braces; its body is on the lines between
		}
		for line != "" && !strings.HasPrefix(line, "#") {
			p := shellwords.NewParser()
			words, err := p.Parse(line)
			if err != nil {
				t.Fatalf("shell line %q: %v", line, err)
			}
			if args, ok := benchqArgs(words); ok {
				cmds = append(cmds, args)
			}
			if p.Position < 0 {
				break
			}
			// Skip the operator (;, &&, |, a redirection such as 2>&1)
			// to parse what follows it.
			rest := strings.TrimSpace(shellOperator.ReplaceAllString(line[p.Position:], ""))
			if rest == line {
				t.Fatalf("shell line %q: cannot skip past %q", line, line[p.Position:])
			}
			line = rest
		}
	}
	return cmds
}

func benchqArgs(words []string) ([]string, bool) {
	for i, w := range words {
		if (w == "benchq" || w == "$BENCHQ_IMAGE") && (i == 0 || words[i-1] != "--name") {
			args := words[i+1:]
			if len(args) == 1 && args[0] == "$@" {
				return nil, false // the wrapper function's own body
			}
			return args, true
		}
	}
	return nil, false
}

// checkBenchqArgs checks one command with the parser benchq uses for it
// and says which kind it is.
func checkBenchqArgs(t *testing.T, args []string) string {
	t.Helper()
	noEnv := func(string) string { return "" }
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || config.IsCommand(args[0]) {
		if _, err := config.Load(args, noEnv); err != nil {
			t.Errorf("benchq %q refused: %v", args, err)
		}
		return "service"
	}
	switch args[0] {
	case "healthcheck":
		if _, _, err := healthcheckFlags(args[1:], io.Discard); err != nil {
			t.Errorf("benchq %q refused: %v", args, err)
		}
	case "submit":
		a, err := parseSubmitArgs(args[1:], Env{Getenv: noEnv, Stderr: io.Discard})
		if err != nil {
			t.Fatalf("benchq %q refused: %v", args, err)
		}
		if !a.wait || len(a.outs) == 0 || a.outs[0].path != "report.md" || a.junit != "junit.xml" {
			t.Errorf("benchq %q: want --wait, --out report.md and --junit junit.xml", args)
		}
		if a.api.key != "" {
			t.Errorf("benchq %q passes the API key on the command line, where ps shows it: use BENCHQ_API_KEY or --key-file", args)
		}
		f, err := os.Open("../../" + a.specPath)
		if err != nil {
			t.Fatalf("job spec of %q: %v", args, err)
		}
		defer f.Close()
		if _, err := job.Decode(f); err != nil {
			t.Errorf("job spec %s does not decode: %v", a.specPath, err)
		}
	default:
		t.Errorf("benchq %q: a command the examples are not expected to run", args)
	}
	return args[0]
}

// TestDocsKeepKeysOffCommandLines: no example in the README, docs/ or
// examples/ passes an API key or a webhook secret as a flag's value, where
// ps (and a CI log echoing commands) shows it; they use the environment or
// a file.
func TestDocsKeepKeysOffCommandLines(t *testing.T) {
	// A variable or a literal key as the value; "--key KEY" in prose is not a command.
	inArgv := regexp.MustCompile(`--(key|webhook-secret)[ =]['"]?(\$|bq_|whsec_)`)
	paths := []string{"../../README.md"}
	for _, dir := range []string{"../../docs", "../../examples"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".svg") {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if inArgv.MatchString(line) {
				t.Errorf("%s:%d passes a secret as a flag: %s", p, i+1, strings.TrimSpace(line))
			}
		}
	}
}
