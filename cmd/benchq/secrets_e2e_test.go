package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/secrettest"
)

// TestSecretsStayOutOfLogs runs the whole service in-process on a real
// redis-server, logging at debug level, with an API key whose webhooks are
// signed with its own secret: a job whose url and ab targets send
// Authorization headers runs through `benchq submit --wait` and calls its
// webhook, and specs that are refused carry such headers too. The targets
// do get the headers; neither the log, nor the CLI's output, nor any 4xx
// answer shows the API key, the webhook secret or a header's token.
func TestSecretsStayOutOfLogs(t *testing.T) {
	rs := redistest.Start(t)
	secretBytes := make([]byte, 24)
	if _, err := rand.Read(secretBytes); err != nil {
		t.Fatal(err)
	}
	webhookSecret := "whsec_" + base64.StdEncoding.EncodeToString(secretBytes)
	secretFile := filepath.Join(t.TempDir(), "whsec")
	if err := os.WriteFile(secretFile, []byte(webhookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, key, errOut := keysCLI(t, rs.URL(), "add", "ci", "--webhook-secret-file", secretFile)
	key = strings.TrimSpace(key)
	if code != clicmd.KeysExitOK {
		t.Fatalf("keys add = %d %s", code, errOut)
	}

	logs := newLineWatcher()
	log := slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := startMainLogged(t, func(c *config.Config) { c.RedisURL = rs.URL() }, nil, log)
	base := "http://" + key + "@" + m.Addr()

	urlToken, abToken := secrettest.Random(t, "tok_"), secrettest.Random(t, "tok_")
	var mu sync.Mutex
	sent := map[string]bool{}
	tg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.Header.Get("Authorization")] = true
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(tg.Close)
	hooks := startHookRecorder(t)

	t.Setenv("BENCHQ_API_KEY", key)
	spec := map[string]any{
		"targets": []map[string]any{
			{"name": "url", "url": tg.URL + "/", "request": map[string]any{"headers": map[string]string{"Authorization": "Bearer " + urlToken}}},
			{"name": "ab", "ab": "-n 20 -c 2 -H 'Authorization: Bearer " + abToken + "' " + tg.URL + "/"},
		},
		"sweep":   map[string]any{"requests": []int{20}},
		"webhook": map[string]any{"url": hooks.URL},
	}
	cli := newLineWatcher()
	args := []string{"submit", writeSpec(t, spec), "--wait", "--server", m.URL()}
	if got := run(t.Context(), args, nil, cli, cli); got != clicmd.ExitOK {
		t.Fatalf("benchq submit --wait = exit %d, want 0:\n%s", got, cli.String())
	}
	id := regexp.MustCompile(`job (\S+) submitted`).FindStringSubmatch(cli.String())
	if id == nil {
		t.Fatalf("submit named no job:\n%s", cli.String())
	}
	hooks.waitFor(t, id[1], 20*time.Second)
	logs.waitFor(t, regexp.MustCompile(`worker: webhook attempt.* job=`+id[1]), 10*time.Second)
	mu.Lock()
	if !sent["Bearer "+urlToken] || !sent["Bearer "+abToken] {
		t.Errorf("the target saw %d Authorization values, want both tokens: the test must put the secrets in play", len(sent))
	}
	mu.Unlock()

	answers := []string{cli.String()}
	refused := []map[string]any{
		{"targets": []map[string]any{{"url": "http://127.0.0.1:99999/", "request": map[string]any{"headers": map[string]string{"Authorization": "Bearer " + urlToken}}}}},
		{"targets": []map[string]any{{"url": tg.URL + "/", "request": map[string]any{"headers": map[string]string{"Authorization": "Bearer " + urlToken + "\r\nX-Injected: 1"}}}}},
		{"targets": []map[string]any{{"ab": "-p /etc/passwd -H 'Authorization: Bearer " + abToken + "' " + tg.URL + "/"}}},
		{"targets": []map[string]any{{"ab": "-H 'Authorization: Bearer " + abToken + " -n 10 " + tg.URL + "/"}}}, // unbalanced quote
		{"targets": []map[string]any{{"ab": "-H 'Authorization Bearer " + abToken + "' " + tg.URL + "/"}}},       // ab quotes a bad header line
		{"targets": []map[string]any{{"ab": "-C \"sid=" + abToken + "\nx=1\" " + tg.URL + "/"}}},                 // the plan quotes a bad cookie
		{"targets": []map[string]any{{"url": "http://user:" + urlToken + "@127.0.0.1:99999/"}}},
	}
	for _, s := range refused {
		body, _ := json.Marshal(s)
		resp, b := call(t, http.MethodPost, base+"/v1/jobs", body)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("POST %s = %d %s, want 422", body, resp.StatusCode, b)
		}
		answers = append(answers, string(b))
	}
	wrongKey := secrettest.Random(t, "bq_")
	if resp, b := call(t, http.MethodGet, "http://"+wrongKey+"@"+m.Addr()+"/v1/jobs", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET with a wrong key = %d %s, want 401", resp.StatusCode, b)
	}

	secrets := []string{strings.TrimPrefix(key, "bq_"), strings.TrimPrefix(webhookSecret, "whsec_"), urlToken, abToken, strings.TrimPrefix(wrongKey, "bq_")}
	if !strings.Contains(logs.String(), "worker: job finished") {
		t.Fatalf("the log lacks the job's end; is it captured?\n%s", logs.String())
	}
	if shown := secrettest.Leaks(logs.String(), secrets...); len(shown) > 0 {
		t.Errorf("the service's log shows %d secret(s)", len(shown))
	}
	for _, a := range answers {
		if shown := secrettest.Leaks(a, secrets...); len(shown) > 0 {
			t.Errorf("an answer shows %d secret(s):\n%s", len(shown), a)
		}
	}
}
