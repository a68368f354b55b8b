package packagemap_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/benchq/benchq/"

// packageMap is what docs/architecture.md says: each package's floor
// (or "outside" for test support and tools), and who may import each
// large library.
type packageMap struct {
	floor     map[string]int // package (module-relative) -> floor; outside is -1
	libraries map[string][]string
}

const outside = -1

// readMap parses the two tables of the "The package map" section.
func readMap(t *testing.T, root string) packageMap {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := packageMap{floor: map[string]int{}, libraries: map[string][]string{}}
	code := regexp.MustCompile("`([^`]+)`")
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## The package map"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 2 {
			continue
		}
		head := strings.TrimSpace(cells[0])
		var names []string
		for _, c := range code.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			names = append(names, c[1])
		}
		switch {
		case head == "outside":
			for _, n := range names {
				m.floor[n] = outside
			}
		case code.MatchString(head): // a library row: | `github.com/...` | who |
			lib := code.FindStringSubmatch(head)[1]
			m.libraries[lib] = names
		default:
			n, err := strconv.Atoi(head)
			if err != nil {
				continue // the header and separator rows
			}
			for _, p := range names {
				if _, dup := m.floor[p]; dup {
					t.Errorf("package map: %s is listed twice", p)
				}
				m.floor[p] = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(m.floor) < 10 || len(m.libraries) == 0 {
		t.Fatalf("package map: read %d packages and %d libraries from docs/architecture.md: the section's tables are missing or malformed", len(m.floor), len(m.libraries))
	}
	return m
}

// listed is `go list` of every package of the module: its module-relative
// path and its non-test imports.
func listed(t *testing.T, root string, args ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs[strings.TrimPrefix(f[0], module)] = f[1:]
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestImportsGoDown checks that every package is on the map and imports
// only packages on lower floors, so no arrow points up or sideways and no
// cycle can form; test support and tools stay out of the floors' code.
func TestImportsGoDown(t *testing.T) {
	root := moduleRoot(t)
	m := readMap(t, root)
	pkgs := listed(t, root, "./...")
	for pkg, imports := range pkgs {
		fl, ok := m.floor[pkg]
		if !ok {
			t.Errorf("%s is not on the package map in docs/architecture.md", pkg)
			continue
		}
		for _, imp := range imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			df, ok := m.floor[dep]
			switch {
			case !ok:
				// reported as a package of its own
			case df == outside && fl != outside:
				t.Errorf("%s (floor %d) imports %s, which is test support or a tool", pkg, fl, dep)
			case fl != outside && df >= fl:
				t.Errorf("%s (floor %d) imports %s (floor %d): imports must go to a lower floor", pkg, fl, dep, df)
			}
		}
	}
	for pkg := range m.floor {
		if _, ok := pkgs[pkg]; !ok {
			t.Errorf("the package map lists %s, which does not exist", pkg)
		}
	}
}

// TestLibrariesStayInTheirRooms checks that the large libraries (the
// HTTP server, the load engine's client, Redis, the queue) are imported
// only where the map says.
func TestLibrariesStayInTheirRooms(t *testing.T) {
	root := moduleRoot(t)
	m := readMap(t, root)
	for pkg, imports := range listed(t, root, "./...") {
		for lib, allowed := range m.libraries {
			for _, imp := range imports {
				if (imp == lib || strings.HasPrefix(imp, lib+"/")) && !slices.Contains(allowed, pkg) {
					t.Errorf("%s imports %s; only %s may", pkg, imp, strings.Join(allowed, ", "))
				}
			}
		}
	}
}

// TestFrontDoorsAndAdmission checks, over the whole dependency tree
// (go list -deps), the rules the layering exists for: nothing below the
// API reaches it, job admission knows nothing of HTTP servers or the load
// engine, and the triggers that create jobs do not go through the API.
func TestFrontDoorsAndAdmission(t *testing.T) {
	root := moduleRoot(t)
	m := readMap(t, root)
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", module+pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	refuse := func(pkg string, forbidden ...string) {
		for _, d := range deps(pkg) {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
	apiFloor := m.floor["api"]
	for pkg, fl := range m.floor {
		if fl != outside && fl < apiFloor {
			refuse(pkg, module+"api")
		}
	}
	refuse("internal/admit", "github.com/labstack/echo", "github.com/valyala/fasthttp", module+"api")
	for _, trigger := range []string{"internal/schedule", "internal/cihook"} {
		refuse(trigger, module+"api")
	}
}
