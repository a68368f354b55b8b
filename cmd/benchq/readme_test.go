package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// readmeBlock is one ```sh or ```bash block of README.md, in order.
var readmeBlock = regexp.MustCompile("(?s)```(?:sh|bash)\n(.*?)```")

// readmeNotHere names the README blocks this machine cannot run, by a
// command only they use, and why: each is checked another way.
var readmeNotHere = map[string]string{
	"kubectl": "needs a Kubernetes cluster; k8s_test.go checks deploy/ against benchq itself",
}

// TestReadme runs every ```sh and ```bash block of README.md verbatim, in
// order, in one sh, as a reader would: beside the all-in-one service
// (started in-process on a temporary data directory, with its
// redis-server child where one is installed), from the repository's root,
// with TMPDIR a temporary directory. Only addresses change: the service's
// random port replaces 127.0.0.1:8080, and the servers the README says
// the reader brings (a POST target on 8081, HTTP/2 over TLS on 9443 and
// h2c on 9081) are loopback test servers on free ports, as is the port
// the TLS example's openssl s_server takes (8443).
func TestReadme(t *testing.T) {
	for _, tool := range []string{"curl", "openssl", "awk", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not on PATH under CI: %v", tool, err)
			}
			t.Skipf("%s not installed; skipping the README", tool)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlock.FindAllStringSubmatch(string(readme), -1)
	dir := t.TempDir()
	m := startMain(t, func(c *config.Config) { c.DataDir = dir })
	if m.redis.child == nil {
		t.Error("redis-server is installed, but the README's all-in-one did not start it")
	}
	replace := readmeServers(t, m.Addr())

	var script strings.Builder
	script.WriteString("set -eu\n")
	ran := 0
	for i, b := range blocks {
		if why := notHere(b[1]); why != "" {
			t.Logf("README block %d not run here: %s", i+1, why)
			continue
		}
		fmt.Fprintf(&script, "echo '@@block %d start' >&2\n%s\necho '@@block %d ok'\n", i+1, replace.Replace(b[1]), i+1)
		ran++
	}
	if ran < 15 {
		t.Fatalf("ran %d README blocks, want every runnable one (the README has %d)", ran, len(blocks))
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script.String())
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "BENCHQ_DATA_DIR="+dir)
	cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool {
		return strings.HasPrefix(e, "BENCHQ_REDIS_URL=") || strings.HasPrefix(e, "BENCHQ_API_KEY=") || strings.HasPrefix(e, "BENCHQ_SERVER=")
	})
	// The CLI's default server is the README's 127.0.0.1:8080; here the
	// service is elsewhere, as the blocks' addresses are.
	cmd.Env = append(cmd.Env, "BENCHQ_SERVER="+m.URL())
	out, err := cmd.CombinedOutput()
	t.Logf("README output:\n%s", out)
	if err != nil {
		t.Fatalf("README failed: %v (the last @@block start above is the failing one)", err)
	}
	for i, b := range blocks {
		if notHere(b[1]) == "" && !strings.Contains(string(out), fmt.Sprintf("@@block %d ok", i+1)) {
			t.Errorf("README block %d did not complete", i+1)
		}
	}
	checkReadmeOutput(t, m, string(out), tmp)
}

func notHere(block string) string {
	for cmd, why := range readmeNotHere {
		if strings.Contains(block, cmd) {
			return why
		}
	}
	return ""
}

// readmeServers starts the servers the README expects of its reader and
// maps each address it names to one on this test's ports.
func readmeServers(t *testing.T, api string) *strings.Replacer {
	t.Helper()
	post := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("posted\n") })
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<h1>h2</h1>\n")) })
	h2 := testservers.StartH2TLS(t, page)
	h2c := testservers.StartH2C(t, page)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sserver := ln.Addr().String() // openssl s_server binds it once freed
	_ = ln.Close()
	return strings.NewReplacer(
		"127.0.0.1:8080", api,
		"127.0.0.1:8081", strings.TrimPrefix(post, "http://"),
		"127.0.0.1:8443", sserver,
		"127.0.0.1:9443", strings.TrimPrefix(h2.URL, "https://"),
		"127.0.0.1:9081", strings.TrimPrefix(h2c.URL, "http://"),
	)
}

// checkReadmeOutput checks what the blocks say they do, beyond exiting 0.
func checkReadmeOutput(t *testing.T, m *Main, out, tmp string) {
	t.Helper()
	// The first job block echoes "$JOB"; the next prints it finished.
	jobLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m.URL()) + `/v1/jobs/(\w+)$`).FindStringSubmatch(out)
	if jobLine == nil {
		t.Fatalf("no README block printed %s/v1/jobs/<id>", m.URL())
	}
	done := regexp.MustCompile(`(?m)^\{"id":"` + jobLine[1] + `".*"status":"succeeded".*$`).FindString(out)
	if done == "" || !strings.Contains(done, `"runs_done":4`) {
		t.Errorf("README job %s printed %q, want succeeded with 4 runs", jobLine[1], done)
	}
	if !regexp.MustCompile(`(?m)^200$`).MatchString(out) || !regexp.MustCompile(`Revoked key_\w+ \("ops"\)`).MatchString(out) {
		t.Error("the keys block's output lacks the 200 of the ci key or the revocation")
	}
	if resp, _ := call(t, http.MethodGet, m.URL()+"/v1/jobs", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/jobs without a key after the README = %d, want 401", resp.StatusCode)
	}
	for _, f := range []string{"r.html", "report.md", "report.json", "report.svg", "nightly-p99.svg"} {
		if st, err := os.Stat(filepath.Join(tmp, f)); err != nil || st.Size() == 0 {
			t.Errorf("the README left no %s in TMPDIR: %v", f, err)
		}
	}
	if !strings.Contains(out, "refused, as asked") || !strings.Contains(out, "Requests per second") {
		t.Error("the ab and TLS blocks' output lacks ab's report or the refused verification")
	}
}
