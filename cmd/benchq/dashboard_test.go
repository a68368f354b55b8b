package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
)

// browser is a dashboard client that keeps the session cookie by hand and
// follows no redirect, so each answer is seen as the browser gets it.
type browser struct {
	t      *testing.T
	base   string
	cookie string
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.base)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if b.cookie != "" {
		req.Header.Set("Cookie", b.cookie)
	}
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "benchq_session" {
			b.cookie = "benchq_session=" + ck.Value
			if ck.MaxAge < 0 {
				b.cookie = ""
			}
		}
	}
	return resp, string(raw)
}

func (b *browser) get(path string) (*http.Response, string) {
	return b.do(http.MethodGet, path, nil, nil)
}

// keyedRedis is a real redis-server for the all-in-one, and its store to
// make keys in before keyedMain starts, so the open mode is over from the
// start.
func keyedRedis(t *testing.T) (*redistest.Server, *store.Store) {
	t.Helper()
	rs := redistest.Start(t)
	return rs, store.New(rs.Client(t), store.Options{})
}

func keyedMain(t *testing.T, rs *redistest.Server) *Main {
	t.Helper()
	return startMain(t, func(c *config.Config) { c.RedisURL = rs.URL() })
}

// keyedMainLogged is keyedMain logging every line, at debug level, to logs.
func keyedMainLogged(t *testing.T, rs *redistest.Server, logs *logbuf.Buffer) *Main {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return startMainLogged(t, func(c *config.Config) { c.RedisURL = rs.URL() }, nil, log)
}

func addKey(t *testing.T, rs *redistest.Server, st *store.Store, args ...string) (key string, k apikey.Key) {
	t.Helper()
	code, out, errOut := keysCLI(t, rs.URL(), append([]string{"add"}, args...)...)
	if code != clicmd.KeysExitOK {
		t.Fatalf("keys add %v = %d %s", args, code, errOut)
	}
	key = strings.TrimSpace(out)
	k, err := apikey.Authenticate(t.Context(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, k
}

// TestDashboardOpenMode: on the all-in-one's loopback while no key was
// ever created, /ui is open exactly as /v1 is, and the queue monitor,
// which is for admin keys, is not.
func TestDashboardOpenMode(t *testing.T) {
	m := startMain(t, nil)
	b := &browser{t: t, base: m.URL()}
	for _, tt := range []struct {
		path string
		want int
		has  string
	}{
		{"/ui/", http.StatusOK, "open mode"},
		{"/ui", http.StatusMovedPermanently, ""},
		{"/ui/new", http.StatusOK, "Submit job"},
		{"/ui/static/app.css", http.StatusOK, "--accent"},
		{"/ui/jobs/01JC3W9Q5V1ZK2M4N6P8R0T2V4", http.StatusNotFound, "Not found"},
		{"/ui/nowhere", http.StatusNotFound, "no such page"},
		{"/monitor/", http.StatusForbidden, "admin keys"},
	} {
		resp, body := b.get(tt.path)
		if resp.StatusCode != tt.want || !strings.Contains(body, tt.has) {
			t.Errorf("GET %s = %d, want %d containing %q:\n%.300s", tt.path, resp.StatusCode, tt.want, tt.has, body)
		}
		if strings.HasPrefix(tt.path, "/ui/") && resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s has no Content-Security-Policy", tt.path)
		}
	}
}

// TestDashboardAuth: the session cookie is the API key, checked by the
// same lookup as a Bearer header on every request; it never shows.
func TestDashboardAuth(t *testing.T) {
	rs, st := keyedRedis(t)
	key, k := addKey(t, rs, st, "alice")
	admin, _ := addKey(t, rs, st, "--admin", "ops")
	var logs logbuf.Buffer
	m := keyedMainLogged(t, rs, &logs)
	b := &browser{t: t, base: m.URL()}
	var bodies []string
	seen := func(s string) { bodies = append(bodies, s) }

	resp, body := b.get("/ui/")
	seen(body)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/signin?next=%2Fui%2F" {
		t.Fatalf("GET /ui/ without a session = %d Location %q, want 303 to the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := b.get("/ui/jobs/x/events"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("event stream without a session = %d, want 401", resp.StatusCode)
	}
	resp, body = b.get("/ui/signin")
	seen(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="key"`) {
		t.Fatalf("GET /ui/signin = %d, want the form", resp.StatusCode)
	}

	// CSRF: a sign-in (or any POST) not sent from a dashboard page.
	for name, h := range map[string]map[string]string{
		"no origin or referer": {"Origin": ""},
		"other origin":         {"Origin": "http://evil.example"},
		"other referer":        {"Origin": "", "Referer": "http://evil.example/page"},
	} {
		resp, body := b.do(http.MethodPost, "/ui/signin", url.Values{"key": {key}}, h)
		seen(body)
		if resp.StatusCode != http.StatusForbidden || b.cookie != "" {
			t.Errorf("%s: POST /ui/signin = %d (cookie %v), want 403 and no session", name, resp.StatusCode, b.cookie != "")
		}
	}
	resp, body = b.do(http.MethodPost, "/ui/signin", url.Values{"key": {key}}, map[string]string{"Origin": "", "Referer": m.URL() + "/ui/signin"})
	seen(body)
	if resp.StatusCode != http.StatusSeeOther || b.cookie == "" {
		t.Errorf("POST /ui/signin with a same-site Referer = %d, want 303 and a session", resp.StatusCode)
	}
	b.cookie = ""

	wrong := apikey.Prefix + "wrongwrongwrongwrongwrongwrong"
	resp, body = b.do(http.MethodPost, "/ui/signin", url.Values{"key": {wrong}}, nil)
	seen(body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not a valid API key") || strings.Contains(body, wrong) || b.cookie != "" {
		t.Errorf("POST /ui/signin with a wrong key = %d, want 401 saying so, without the key and without a session:\n%.400s", resp.StatusCode, body)
	}

	resp, body = b.do(http.MethodPost, "/ui/signin", url.Values{"key": {key}, "next": {"/ui/new"}}, nil)
	seen(body)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/new" {
		t.Fatalf("POST /ui/signin = %d Location %q, want 303 to /ui/new", resp.StatusCode, resp.Header.Get("Location"))
	}
	setCookie := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"benchq_session=", "Path=/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}
	if strings.Contains(setCookie, "Expires") || strings.Contains(setCookie, "Max-Age") || strings.Contains(setCookie, "Secure") {
		t.Errorf("Set-Cookie %q, want a session cookie, not Secure over plain HTTP", setCookie)
	}
	resp, body = b.get("/ui/")
	seen(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, k.ID) || strings.Contains(body, "open mode") {
		t.Errorf("GET /ui/ signed in = %d, want the key's id shown:\n%.400s", resp.StatusCode, body)
	}
	if resp, body := b.get("/monitor/"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /monitor/ with a non-admin session = %d %.200s, want 403", resp.StatusCode, body)
	}
	resp, body = b.do(http.MethodPost, "/ui/new", url.Values{"targets[0].url": {"http://127.0.0.1:1/"}}, map[string]string{"Origin": "http://evil.example"})
	seen(body)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST /ui/new with a session = %d, want 403", resp.StatusCode)
	}

	// Revoked: the next request goes back to the sign-in page, the cookie
	// cleared.
	if code, _, errOut := keysCLI(t, rs.URL(), "revoke", k.ID); code != clicmd.KeysExitOK {
		t.Fatalf("keys revoke = %d %s", code, errOut)
	}
	resp, body = b.get("/ui/")
	seen(body)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/signin") || b.cookie != "" {
		t.Errorf("GET /ui/ with a revoked key = %d Location %q (cookie kept %v), want 303 to sign in, cookie cleared",
			resp.StatusCode, resp.Header.Get("Location"), b.cookie != "")
	}
	resp, body = b.do(http.MethodPost, "/ui/signin", url.Values{"key": {key}}, nil)
	seen(body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
		t.Errorf("sign in with a revoked key = %d, want 401 saying it was revoked", resp.StatusCode)
	}

	// The queue monitor: an admin's session or Bearer header.
	ab := &browser{t: t, base: m.URL()}
	ab.do(http.MethodPost, "/ui/signin", url.Values{"key": {admin}}, nil)
	if resp, body := ab.get("/monitor/"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("GET /monitor/ as an admin = %d %.200s, want asynqmon's page", resp.StatusCode, body)
	}
	for name, h := range map[string]string{"admin": admin, "non-admin": key, "wrong": wrong} {
		resp, _ := b.do(http.MethodGet, "/monitor/", nil, map[string]string{"Authorization": "Bearer " + h})
		want := map[string]int{"admin": 200, "non-admin": 401, "wrong": 401}[name] // the non-admin key is revoked by now
		if resp.StatusCode != want {
			t.Errorf("GET /monitor/ with a Bearer %s key = %d, want %d", name, resp.StatusCode, want)
		}
	}
	if resp, _ := ab.do(http.MethodPost, "/monitor/api/queues/default:pause", url.Values{}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST to the monitor = %d, want 403: it is read-only", resp.StatusCode)
	}
	for _, body := range bodies {
		if strings.Contains(body, key) || strings.Contains(body, admin) {
			t.Fatalf("a dashboard page shows an API key:\n%s", body)
		}
	}
	if l := logs.String(); !strings.Contains(l, "/ui/signin") || strings.Contains(l, key) || strings.Contains(l, admin) || strings.Contains(l, wrong) {
		t.Errorf("the service's log has the sign-ins %v, and an API key %v", strings.Contains(l, "/ui/signin"),
			strings.Contains(l, key) || strings.Contains(l, admin) || strings.Contains(l, wrong))
	}
}

// TestDashboardPages: every page of a finished job renders from the real
// service, the list filters, the compare view and the submit form's 422.
func TestDashboardPages(t *testing.T) {
	rs, st := keyedRedis(t)
	key, _ := addKey(t, rs, st, "alice")
	other, _ := addKey(t, rs, st, "bob")
	m := keyedMain(t, rs)
	base := "http://" + key + "@" + m.Addr()
	fast, slow := testservers.StartTarget(t, "fast", 0), testservers.StartTarget(t, "slow", 0)
	spec := func(name, env string) map[string]any {
		return map[string]any{
			"name": name, "labels": map[string]string{"env": env}, "baseline": "fast",
			"targets": []map[string]string{{"name": "fast", "url": fast.URL}, {"name": "slow", "url": slow.URL}},
			"sweep":   map[string]any{"concurrency": []int{1, 2}, "requests": []int{50}, "repeats": 2},
		}
	}
	a, c := submit(t, base, spec("nightly alpha", "ci")), submit(t, base, spec("nightly beta", "dev"))
	bobs := submit(t, "http://"+other+"@"+m.Addr(), spec("bob's job", "ci"))
	for _, id := range []string{a.ID, c.ID} {
		if j := waitJob(t, base, id, 60*time.Second); j.Status != "succeeded" {
			t.Fatalf("job %s = %s %s, want succeeded", id, j.Status, j.Error)
		}
	}
	b := &browser{t: t, base: m.URL()}
	if resp, _ := b.do(http.MethodPost, "/ui/signin", url.Values{"key": {key}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in = %d", resp.StatusCode)
	}

	for _, tt := range []struct {
		name     string
		path     string
		want     int
		has, not []string
	}{
		{"list", "/ui/", 200, []string{a.ID, c.ID, "nightly alpha", "env:ci"}, []string{bobs.ID}},
		{"by status", "/ui/?status=succeeded", 200, []string{a.ID, c.ID}, nil},
		{"by other status", "/ui/?status=running", 200, []string{"No jobs match"}, []string{a.ID}},
		{"by label", "/ui/?label=env:ci", 200, []string{a.ID}, []string{c.ID, bobs.ID}},
		{"by name", "/ui/?name=BETA", 200, []string{c.ID}, []string{a.ID}},
		{"bad label", "/ui/?label=nocolon", 400, []string{"not key:value"}, nil},
		{"job page", "/ui/jobs/" + a.ID, 200, []string{
			"Verdict", "/ui/jobs/" + a.ID + "/report?format=svg", "mean successful req/s", "slow vs fast", "Saturation",
			"==&gt; target fast, c=1, n=50, repeat 1/2 &lt;==", "Complete requests:", "Compare with…", c.ID,
			"format=html", "format=markdown", "format=png", "format=csv", "format=ab", "format=http_load", "format=gnuplot", "format=json",
		}, []string{bobs.ID, "Cancel job", `id="live"`}},
		{"another key's job", "/ui/jobs/" + bobs.ID, 404, []string{"Not found"}, []string{"bob&#39;s job"}},
		{"compare", "/ui/compare?a=" + a.ID + "&b=" + c.ID, 200, []string{"compared with job " + c.ID, "baseline req/s", "nightly beta"}, nil},
		{"compare with another key's job", "/ui/compare?a=" + a.ID + "&b=" + bobs.ID, 404, nil, nil},
		{"compare without b", "/ui/compare?a=" + a.ID, 400, []string{"Choose two jobs"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b.t = t
			resp, body := b.get(tt.path)
			if resp.StatusCode != tt.want {
				t.Errorf("GET %s = %d, want %d:\n%.500s", tt.path, resp.StatusCode, tt.want, body)
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("GET %s lacks %q", tt.path, s)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(body, s) {
					t.Errorf("GET %s shows %q", tt.path, s)
				}
			}
			if strings.Contains(body, key) {
				t.Errorf("GET %s shows the API key", tt.path)
			}
		})
	}
	b.t = t
	for _, f := range []struct{ format, ctype string }{
		{"svg", "image/svg+xml"}, {"png", "image/png"}, {"html", "text/html"}, {"markdown", "text/markdown"},
		{"json", "application/json"}, {"csv", "text/csv"}, {"ab", "text/plain"}, {"http_load", "text/plain"}, {"gnuplot", "text/tab-separated-values"},
	} {
		resp, body := b.get("/ui/jobs/" + a.ID + "/report?format=" + f.format + "&download=1")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), f.ctype) || len(body) == 0 ||
			!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("download %s = %d %q %q, want 200 %s as an attachment", f.format, resp.StatusCode,
				resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), f.ctype)
		}
	}
	// Each run's timeline and distribution, as images the finished page
	// links (lazily, folded for a job of 8 runs), through the dashboard.
	_, page := b.get("/ui/jobs/" + a.ID)
	for _, chart := range []struct{ name, text string }{{"timeline", "latency percentiles per interval"}, {"distribution", "latency by percentile"}} {
		src := "/ui/jobs/" + a.ID + "/report?format=svg&amp;chart=" + chart.name + "&amp;run=1%3a1"
		if !strings.Contains(page, `<img loading="lazy" src="`+src+`"`) || strings.Contains(page, `class="runcharts" open`) {
			t.Errorf("job page lacks a folded run's lazy %s image %s", chart.name, src)
		}
		resp, body := b.get(strings.ReplaceAll(src, "&amp;", "&"))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, chart.text) ||
			!strings.Contains(body, "slow · c=1 · n=50 · repeat 2/2") {
			t.Errorf("GET %s = %d %q %.300s, want run 1:1's %s chart", src, resp.StatusCode, resp.Header.Get("Content-Type"), body, chart.name)
		}
	}
	if resp, body := b.get("/ui/jobs/" + a.ID + "/report?format=svg&chart=timeline&run=9:9"); resp.StatusCode != http.StatusBadRequest ||
		!strings.Contains(body, `"field":"run"`) {
		t.Errorf("GET a chart of no run through the dashboard = %d %.300s, want the API's 400 naming run", resp.StatusCode, body)
	}
	if resp, body := b.do(http.MethodPost, "/ui/jobs/"+a.ID+"/cancel", url.Values{}, nil); resp.StatusCode != http.StatusSeeOther ||
		!strings.Contains(resp.Header.Get("Location"), "already+finished") {
		t.Errorf("cancel a finished job = %d %q %s, want 303 back saying it had finished", resp.StatusCode, resp.Header.Get("Location"), body)
	}

	// The submit form: the API's 422 messages next to their fields, the
	// form kept as typed.
	bad := url.Values{
		"targets[0].name": {"fast"}, "targets[0].url": {"ftp://127.0.0.1/"},
		"targets[2].name": {"second"}, "targets[2].url": {""},
		"sweep.concurrency": {"0 4"}, "stop": {"requests"}, "sweep.requests": {"100"}, "sweep.repeats": {"1"},
		"name": {"typed name"},
	}
	resp, body := b.do(http.MethodPost, "/ui/new", bad, nil)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("POST /ui/new with a bad spec = %d, want 422:\n%.800s", resp.StatusCode, body)
	}
	for _, input := range []string{"targets[0].url", "targets[2].url", "sweep.concurrency"} {
		i := strings.Index(body, `name="`+input+`"`)
		if i < 0 || !strings.Contains(body[i:min(len(body), i+600)], `class="fielderr"`) || !strings.Contains(body[max(0, i-200):i+200], "aria-invalid") {
			t.Errorf("POST /ui/new: no message next to %s:\n%s", input, body)
		}
	}
	if !strings.Contains(body, `value="typed name"`) || !strings.Contains(body, `value="0 4"`) {
		t.Errorf("POST /ui/new: the form was not kept as typed")
	}
	good := url.Values{
		"targets[0].name": {"fast"}, "targets[0].url": {fast.URL},
		"sweep.concurrency": {"1, 2"}, "stop": {"requests"}, "sweep.requests": {"20"}, "sweep.repeats": {"1"},
		"request.keepalive": {"on"}, "name": {"from the form"}, "labels": {"via:ui"},
	}
	resp, body = b.do(http.MethodPost, "/ui/new", good, nil)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/jobs/") {
		t.Fatalf("POST /ui/new = %d %q %.500s, want 303 to the job page", resp.StatusCode, loc, body)
	}
	id := strings.TrimPrefix(loc, "/ui/jobs/")
	_, raw := call(t, http.MethodGet, base+"/v1/jobs/"+id, nil)
	for _, want := range []string{`"name":"from the form"`, `"via":"ui"`, `"keepalive":true`, `"concurrency":[1,2]`, `"requests":[20]`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("job submitted by the form = %s, want %s", raw, want)
		}
	}
}
