package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/benchq/benchq/internal/browsertest"
	"github.com/benchq/benchq/internal/proctest"
)

// TestOpenModeFromAnotherSite runs the all-in-one in its keyless open mode
// and opens, in a real Chromium, a page served from another loopback
// origin (127.0.0.2) that tries what any web page could: a no-cors
// text/plain fetch of a job spec to /v1/jobs, a text/plain form whose
// body is that JSON, and the dashboard's own form. The API refuses all
// three, nothing is enqueued and the target the spec names gets no
// request. A DNS-rebinding page, a foreign Host sent to 127.0.0.1, is
// answered 421 and reads nothing, where a name given to --allowed-hosts
// is answered. The dashboard itself still submits a job, and a JSON POST
// from a plain client still runs one.
func TestOpenModeFromAnotherSite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchq and Chromium; skipped with -short")
	}
	bin := proctest.Build(t)
	b := browsertest.Start(t, 1024, 768)
	aio := proctest.Start(t, bin, append(os.Environ(), "BENCHQ_LOG_LEVEL=info", "BENCHQ_LOG_FORMAT=text"),
		"--ephemeral", "--addr", "127.0.0.1:0", "--auth", "auto", "--allowed-hosts", "benchq.dev.example")
	addr := aio.WaitAddr(t)
	aio.WaitLine(t, regexp.MustCompile(`auth open`), 10*time.Second)
	api := "http://" + addr

	target, hits := countingTarget(t)
	spec := fmt.Sprintf(`{"targets":[{"url":%q}],`+
		`"request":{"method":"POST","headers":{"X-Attacker":"1"},"body":"attacker-chosen"},`+
		`"sweep":{"concurrency":[1],"requests":[5]},"name":"from a web page"}`, target)
	page := attackerPage(t, api, spec)

	b.Do(t, 30*time.Second, chromedp.Navigate(page))
	// The page cannot read the API's answers; the API's request log says
	// what it answered each of them.
	refused := map[string]int{}
	requestLine := regexp.MustCompile(`"http request".* method=POST path=(/v1/jobs|/ui/new) .*status=(\d+)`)
	for range 3 {
		m := aio.WaitLine(t, requestLine, 20*time.Second)
		if m[2] != "403" {
			t.Errorf("POST %s from another origin answered %s, want 403", m[1], m[2])
		}
		refused[m[1]]++
	}
	if refused["/v1/jobs"] != 2 || refused["/ui/new"] != 1 {
		t.Errorf("refused POSTs = %v, want the fetch and the form to /v1/jobs and the form to /ui/new", refused)
	}
	if got := browsertest.Eval[string](t, b, "window.readResult"); got != "refused" {
		t.Errorf("the page's CORS read of /v1/jobs = %q, want it refused by the browser", got)
	}

	// A client that is not a browser, with a form's content type.
	resp, body := post(t, api+"/v1/jobs", spec, map[string]string{"Content-Type": "text/plain"})
	if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(body, "Content-Type: application/json") {
		t.Errorf("text/plain POST = %d %s, want 415 saying to send JSON", resp.StatusCode, body)
	}
	if ids := jobIDs(t, api); len(ids) != 0 {
		t.Fatalf("jobs after the attack = %v, want none", ids)
	}

	// DNS rebinding: the page's origin is a name of its author's that now
	// resolves to 127.0.0.1, so the browser sends that name as Host.
	evil := "evil.example:" + portOf(t, addr)
	resp, body = post(t, api+"/v1/jobs", spec, map[string]string{"Host": evil, "Content-Type": "application/json", "Origin": "http://" + evil})
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("POST with Host %s = %d %s, want 421", evil, resp.StatusCode, body)
	}
	if ids := jobIDs(t, api); len(ids) != 0 {
		t.Fatalf("jobs after the rebinding POST = %v, want none", ids)
	}
	time.Sleep(time.Second) // a job enqueued by mistake would have started by now
	if n := hits.Load(); n != 0 {
		t.Fatalf("the attacker's target got %d requests, want none", n)
	}

	// The dashboard in the same browser submits a job, and curl's JSON
	// POST is accepted: the open mode still works for its own clients.
	in := func(name string) chromedp.CSS { return chromedp.CSS(`input[name="` + name + `"]`) }
	b.Do(t, 30*time.Second, chromedp.Navigate(api+"/ui/new"), chromedp.WaitVisible(in("targets[0].url")),
		chromedp.SetValue(in("targets[0].url"), target), chromedp.SetValue(in("sweep.concurrency"), "1"),
		chromedp.SetValue(in("sweep.requests"), "5"), chromedp.SetValue(in("sweep.repeats"), "1"),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitPath(t, b, "/ui/jobs/", 20*time.Second)
	resp, body = post(t, api+"/v1/jobs", spec, map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("JSON POST = %d %s, want 202", resp.StatusCode, body)
	}
	ids := jobIDs(t, api)
	if len(ids) != 2 {
		t.Fatalf("jobs after the dashboard's and curl's submissions = %v, want 2", ids)
	}
	for deadline := time.Now().Add(30 * time.Second); hits.Load() < 10 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	if n := hits.Load(); n < 10 {
		t.Errorf("the target got %d requests from the two accepted jobs, want 10", n)
	}

	// The rebinding page reads nothing either.
	for _, path := range []string{"/v1/jobs", "/v1/jobs/" + ids[0], "/ui/"} {
		resp, body := get(t, api+path, evil)
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(body, target) || path != "/v1/jobs/"+ids[0] && strings.Contains(body, ids[0]) {
			t.Errorf("GET %s with Host %s = %d %.300s, want 421 and nothing of the jobs", path, evil, resp.StatusCode, body)
		}
	}
	if resp, _ := get(t, api+"/healthz", evil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz with Host %s = %d, want 200 (probes answer any Host)", evil, resp.StatusCode)
	}
	// A name the operator allowed is answered like the address itself.
	if resp, body := get(t, api+"/v1/jobs", "benchq.dev.example:"+portOf(t, addr)); resp.StatusCode != http.StatusOK || !strings.Contains(body, ids[0]) {
		t.Errorf("GET /v1/jobs with an allowed Host = %d %.300s, want 200 and the jobs", resp.StatusCode, body)
	}
	aio.Stop(t)
}

// countingTarget is a loopback server that counts every request.
func countingTarget(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("ok"))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/", &hits
}

// attackerPage serves, from 127.0.0.2 (another origin, and another site,
// of the same loopback), a page that fires three cross-site POSTs at api
// on load: a no-cors fetch and a text/plain form to /v1/jobs, each
// carrying spec, and the dashboard's form to /ui/new. It also tries to
// read the job list with a CORS fetch, and records in window.readResult
// whether the browser let it.
func attackerPage(t *testing.T, api, spec string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2 for the other origin: %v", err)
	}
	// A text/plain form sends "name=value\r\n": a name holding the spec
	// up to the end of its last string, and a value closing it, make the
	// same JSON with "=" added to that string.
	cut := strings.LastIndex(spec, `"}`)
	name, value := spec[:cut], `"}`
	html := `<!doctype html><title>another site</title>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="plain" method="post" enctype="text/plain" target="sink1" action="` + api + `/v1/jobs">
<input type="hidden" name='` + escapeAttr(name) + `' value='` + escapeAttr(value) + `'></form>
<form id="ui" method="post" target="sink2" action="` + api + `/ui/new">
<input type="hidden" name="targets[0].url" value="` + escapeAttr(targetOf(spec)) + `">
<input type="hidden" name="sweep.concurrency" value="1"><input type="hidden" name="sweep.requests" value="5"></form>
<script>
window.readResult = "pending";
fetch(` + jsString(api+"/v1/jobs") + `, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: ` + jsString(spec) + `})
  .finally(() => {
    document.getElementById("plain").submit();
    document.getElementById("ui").submit();
  });
fetch(` + jsString(api+"/v1/jobs") + `).then(r => r.text()).then(() => { window.readResult = "read"; }, () => { window.readResult = "refused"; });
</script>`
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(html))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

func escapeAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", `"`, "&quot;", "<", "&lt;").Replace(s)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func targetOf(spec string) string {
	var s struct {
		Targets []struct{ URL string } `json:"targets"`
	}
	_ = json.Unmarshal([]byte(spec), &s)
	return s.Targets[0].URL
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// post sends body with exactly the headers given ("Host" sets the Host).
func post(t *testing.T, u, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	return send(t, http.MethodPost, u, body, header)
}

func get(t *testing.T, u, host string) (*http.Response, string) {
	t.Helper()
	return send(t, http.MethodGet, u, "", map[string]string{"Host": host})
}

func send(t *testing.T, method, u, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// jobIDs lists every job the API holds, as a client of the open mode.
func jobIDs(t *testing.T, api string) []string {
	t.Helper()
	resp, body := proctest.Call(t, http.MethodGet, api+"/v1/jobs?limit=100", nil)
	var list struct {
		Jobs []struct {
			ID string `json:"id"`
		} `json:"jobs"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil {
		t.Fatalf("GET /v1/jobs = %d %s", resp.StatusCode, body)
	}
	var ids []string
	for _, j := range list.Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// waitPath waits until the browser's page is under prefix.
func waitPath(t *testing.T, b *browsertest.Browser, prefix string, limit time.Duration) {
	t.Helper()
	var path string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if path = browsertest.Eval[string](t, b, "location.pathname"); strings.HasPrefix(path, prefix) {
			return
		}
	}
	t.Fatalf("the browser stayed at %s, want a page under %s", path, prefix)
}
