package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/report"
	"github.com/benchq/benchq/internal/secrettest"
)

// TestOutputsRedactSecrets runs the whole service in-process on a real
// redis-server: a job whose job-wide request, one target's own request and
// an ab line (-H and -A) carry random credentials, with user info in a
// target's and the webhook's URL, runs against a loopback fasthttp target
// that records the credentials it received, so the run is known to have
// used the real values. Then nothing the service shows of the job (the
// create answer, GET, the list, results, every report format, the event
// stream, the webhook body, the deliveries, `benchq get --json`, `benchq
// report`, the log) holds any 8 characters of them, and the job and the
// JSON report show the marker where they were.
func TestOutputsRedactSecrets(t *testing.T) {
	rs := redistest.Start(t)
	logs := newLineWatcher()
	log := slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := startMainLogged(t, func(c *config.Config) { c.RedisURL = rs.URL() }, nil, log)
	base := m.URL()

	jobToken, abToken, basicPass := secrettest.Random(t, "tok_"), secrettest.Random(t, "tok_"), secrettest.Random(t, "pw_")
	targetKey, urlPass, hookPass := secrettest.Random(t, "key_"), secrettest.Random(t, "pw_"), secrettest.Random(t, "pw_")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+basicPass))
	urlBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+urlPass))

	var mu sync.Mutex
	received := map[string]bool{} // "Name: value" of every credential header the target saw
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		for k, v := range ctx.Request.Header.All() {
			if job.SecretHeader(string(k)) {
				received[string(k)+": "+string(v)] = true
			}
		}
		mu.Unlock()
		ctx.SetBodyString("ok")
	}}
	go func() { _ = tg.Serve(ln) }()
	t.Cleanup(func() { _ = tg.Shutdown() })
	addr := ln.Addr().String()
	hooks := startHookRecorder(t)

	spec := map[string]any{
		"name": "redaction",
		"targets": []map[string]any{
			{"name": "job-wide", "url": "http://" + addr + "/a"},
			{"name": "own", "url": "http://user:" + urlPass + "@" + addr + "/b",
				"request": map[string]any{"headers": map[string]string{"X-Api-Key": targetKey, "Accept": "text/plain"}}},
			{"name": "ab", "ab": `-n 20 -c 2 -H "Authorization: Bearer ` + abToken + `" -A user:` + basicPass + " http://" + addr + "/c"},
		},
		"request": map[string]any{"headers": map[string]string{"Authorization": "Bearer " + jobToken}},
		"sweep":   map[string]any{"requests": []int{20}},
		"webhook": map[string]any{"url": strings.Replace(hooks.URL, "http://", "http://hook:"+hookPass+"@", 1)},
	}
	body, _ := json.Marshal(spec)
	resp, created := call(t, http.MethodPost, base+"/v1/jobs", body)
	var j apiJob
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(created, &j) != nil {
		t.Fatalf("POST /v1/jobs = %d %s, want 202", resp.StatusCode, created)
	}
	if got := waitJob(t, base, j.ID, 60*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	hooks.waitFor(t, j.ID, 20*time.Second)

	mu.Lock()
	// The ab line's -A and -H Authorization are one header, joined as
	// repeated headers are; the URL's user info is sent as Basic auth.
	wants := []string{"Authorization: Bearer " + jobToken, "X-Api-Key: " + targetKey,
		"Authorization: " + basic + ", Bearer " + abToken, "Authorization: " + urlBasic}
	for i, want := range wants {
		if !received[want] {
			t.Errorf("the target never received credential %d of %d: the run must use the real values", i+1, len(wants))
		}
	}
	mu.Unlock()

	shown := map[string][]byte{"POST /v1/jobs": created}
	get := func(path string) []byte {
		resp, b := call(t, http.MethodGet, base+path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b)
		}
		shown["GET "+path] = b
		return b
	}
	jobPath := "/v1/jobs/" + j.ID
	for _, p := range []string{jobPath, "/v1/jobs", jobPath + "/results", jobPath + "/events", jobPath + "/deliveries"} {
		get(p)
	}
	for _, f := range report.Formats() {
		get(jobPath + "/report?format=" + string(f))
	}
	shown["webhook body"] = hooks.body(j.ID)
	for _, args := range [][]string{{"get", j.ID, "--json"}, {"report", j.ID, "--format", "json"}, {"report", j.ID}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), append(args, "--server", base), nil, &out, &errOut); code != clicmd.ExitOK {
			t.Fatalf("benchq %v = exit %d: %s", args, code, errOut.String())
		}
		shown["benchq "+strings.Join(args, " ")] = append(out.Bytes(), errOut.Bytes()...)
	}
	shown["log"] = []byte(logs.String())

	secrets := []string{jobToken, abToken, basicPass, strings.TrimPrefix(basic, "Basic "), targetKey, urlPass, strings.TrimPrefix(urlBasic, "Basic "), hookPass}
	for what, b := range shown {
		if len(b) == 0 {
			t.Errorf("%s: nothing to check", what)
		}
		if leaked := secrettest.Leaks(string(b), secrets...); len(leaked) > 0 {
			t.Errorf("%s shows %d of the %d secrets", what, len(leaked), len(secrets))
		}
	}
	// The marker stands where each of the 4 header and flag secrets was
	// (the ab line holds two), and the user info of the 2 URLs is gone.
	for _, what := range []string{"POST /v1/jobs", "GET " + jobPath, "GET /v1/jobs", "GET " + jobPath + "/results", "GET " + jobPath + "/report?format=json"} {
		if n := strings.Count(string(shown[what]), job.RedactedValue); n != 4 {
			t.Errorf("%s shows %q %d times, want 4", what, job.RedactedValue, n)
		}
		if n := strings.Count(string(shown[what]), "://xxxxx@"); n != 2 {
			t.Errorf("%s shows %d URLs without their user info, want 2", what, n)
		}
	}
}
