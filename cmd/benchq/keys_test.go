package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// keysCLI runs `benchq keys ARGS` against redisURL.
func keysCLI(t *testing.T, redisURL string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "BENCHQ_REDIS_URL" {
			return redisURL
		}
		return ""
	}
	code = clicmd.Keys(t.Context(), args, clicmd.Env{Getenv: env, Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

func TestKeysCommand(t *testing.T) {
	rs := redistest.Start(t)
	code, plain, info := keysCLI(t, rs.URL(), "add", "ci", "--max-concurrency", "8", "--max-duration=2m",
		"--submissions-per-minute", "5", "--webhook-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	plain = strings.TrimSpace(plain)
	if code != clicmd.KeysExitOK || !strings.HasPrefix(plain, apikey.Prefix) || strings.Contains(plain, "\n") {
		t.Fatalf("keys add = %d, stdout %q, stderr %q; want 0 and the key alone on stdout", code, plain, info)
	}
	st := store.New(rs.Client(t), store.Options{})
	k, err := apikey.Authenticate(t.Context(), st, plain)
	if err != nil {
		t.Fatalf("the printed key does not authenticate: %v", err)
	}
	want := apikey.Quota{MaxConcurrency: 8, MaxDuration: 2 * time.Minute, SubmissionsPerMinute: 5}
	if k.Name != "ci" || k.Admin || k.Quota != want || k.WebhookSecret == "" || !strings.Contains(info, k.ID) {
		t.Errorf("stored key = %+v, stderr %q; want ci, not admin, quota %+v, the secret, and the id shown", k, info, want)
	}
	if code, _, _ := keysCLI(t, rs.URL(), "add", "--admin", "ops"); code != clicmd.KeysExitOK {
		t.Fatalf("keys add --admin ops = %d", code)
	}
	code, stored, _ := keysCLI(t, rs.URL(), "add", "store", "--max-templates", "7", "--max-template-bytes", "65536",
		"--max-schedules", "2", "--max-pins", "3")
	if code != clicmd.KeysExitOK {
		t.Fatalf("keys add with storage limits = %d", code)
	}
	sk, err := apikey.Authenticate(t.Context(), st, strings.TrimSpace(stored))
	if want := (apikey.Quota{MaxTemplates: 7, MaxTemplateBytes: 65536, MaxSchedules: 2, MaxPins: 3}); err != nil || sk.Quota != want {
		t.Errorf("key with storage limits = %+v (%v), want quota %+v", sk.Quota, err, want)
	}
	if code, _, errOut := keysCLI(t, rs.URL(), "add", "neg", "--max-pins", "-1"); code != clicmd.KeysExitUsage || !strings.Contains(errOut, "max-pins") {
		t.Errorf("keys add --max-pins -1 = %d %q, want %d naming max-pins", code, errOut, clicmd.KeysExitUsage)
	}

	code, list, _ := keysCLI(t, rs.URL(), "list")
	if code != clicmd.KeysExitOK || !strings.Contains(list, k.ID) || !strings.Contains(list, "concurrency=8 duration=2m0s submissions/min=5") ||
		!strings.Contains(list, "templates=7 template-bytes=65536 schedules=2 pins=3") ||
		!strings.Contains(list, "ops") || strings.Contains(list, k.Hash) || strings.Contains(list, plain) || strings.Contains(list, "whsec_") {
		t.Errorf("keys list = %d:\n%s\nwant both keys with quotas and no hash, key or secret", code, list)
	}

	if code, out, _ := keysCLI(t, rs.URL(), "revoke", k.ID); code != clicmd.KeysExitOK || !strings.Contains(out, "Revoked "+k.ID) {
		t.Errorf("keys revoke = %d %q", code, out)
	}
	if _, err := apikey.Authenticate(t.Context(), st, plain); err == nil {
		t.Error("the revoked key still authenticates")
	}
	if _, list, _ := keysCLI(t, rs.URL(), "list"); !strings.Contains(lineOf(list, k.ID), "T") || strings.HasSuffix(lineOf(list, k.ID), "-") {
		t.Errorf("keys list after revoke shows %q, want a revocation time", lineOf(list, k.ID))
	}
	if code, _, errOut := keysCLI(t, rs.URL(), "revoke", "key_000000000000"); code != clicmd.KeysExitFailed || !strings.Contains(errOut, "no key") {
		t.Errorf("revoke unknown = %d %q, want %d and no key", code, errOut, clicmd.KeysExitFailed)
	}
}

func lineOf(table, id string) string {
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, id) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func TestKeysCommandUsage(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		args    []string
		mention string
	}{
		{"no subcommand", "redis://127.0.0.1:1", nil, "usage: benchq keys add NAME"},
		{"unknown subcommand", "redis://127.0.0.1:1", []string{"rotate"}, "unknown subcommand"},
		{"add without name", "redis://127.0.0.1:1", []string{"add"}, "takes 1 argument"},
		{"no redis", "", []string{"list"}, "needs a Redis URL"},
		{"negative quota", "redis://127.0.0.1:1", []string{"add", "x", "--max-runs=-1"}, "must not be negative"},
		{"bad webhook secret", "redis://127.0.0.1:1", []string{"add", "x", "--webhook-secret", "hunter2"}, "whsec_"},
		{"webhook secret twice", "redis://127.0.0.1:1", []string{"add", "x", "--webhook-secret", "whsec_MfKQ", "--webhook-secret-file", "/dev/null"}, "not both"},
		{"missing webhook secret file", "redis://127.0.0.1:1", []string{"add", "x", "--webhook-secret-file", "/nonexistent/whsec"}, "--webhook-secret-file: cannot open the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := keysCLI(t, tt.url, tt.args...)
			if code != clicmd.KeysExitUsage || !strings.Contains(errOut, tt.mention) {
				t.Errorf("keys %q = %d %q, want %d mentioning %q", tt.args, code, errOut, clicmd.KeysExitUsage, tt.mention)
			}
		})
	}
}

// TestSharedSubmissionRate runs three `benchq serve` processes on one
// redis-server: a key allowed 5 submissions a minute gets exactly 5 of 9
// POSTs spread over the three, and 4 429s with Retry-After.
func TestSharedSubmissionRate(t *testing.T) {
	rs := redistest.Start(t)
	bin := buildBenchq(t)
	env := serviceEnv(rs.URL())
	code, key, errOut := keysCLI(t, rs.URL(), "add", "ci", "--submissions-per-minute", "5")
	if code != clicmd.KeysExitOK {
		t.Fatalf("keys add = %d %s", code, errOut)
	}
	key = strings.TrimSpace(key)
	var bases []string
	var procs []*process
	for range 3 {
		p := startProcess(t, bin, env, "serve", "--addr", "127.0.0.1:0")
		procs = append(procs, p)
		bases = append(bases, "http://"+p.WaitAddr(t))
	}
	spec := []byte(`{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurrency":[1],"requests":[1]}}`)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Go(func() {
			resp, body, err := postWithKey(t.Context(), bases[i%3]+"/v1/jobs", key, spec)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			statuses[resp.StatusCode]++
			if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("POST = %d %s, want 202 or 429", resp.StatusCode, body)
			}
			if resp.StatusCode == http.StatusTooManyRequests {
				var p struct {
					Type  string `json:"type"`
					Limit int    `json:"limit"`
				}
				if err := json.Unmarshal(body, &p); err != nil || p.Limit != 5 || !strings.HasSuffix(p.Type, "/rate-limited") {
					t.Errorf("429 body %s, want rate-limited with limit 5", body)
				}
				if resp.Header.Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
			}
		})
	}
	wg.Wait()
	if statuses[202] != 5 || statuses[429] != 4 {
		t.Errorf("statuses over 3 API processes = %v, want 5×202 and 4×429", statuses)
	}
	for _, p := range procs {
		p.Stop(t)
		for _, line := range p.Buffered() {
			if strings.Contains(line, key) || strings.Contains(line, "Bearer") {
				t.Errorf("benchq serve logged the key or its header: %s", line)
			}
		}
	}
}

// postWithKey POSTs body with key as the bearer token; safe to call from
// goroutines (it reports instead of failing the test).
func postWithKey(ctx context.Context, url, key string, body []byte) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	return resp, b.Bytes(), err
}

// TestOpenModeOnlyAllInOne: benchq serve on loopback (behind a local
// proxy, say) needs a key even when none exists; the all-in-one command
// is open until a key is created, and stays closed once one was, even
// after it is revoked and the process restarted.
func TestOpenModeOnlyAllInOne(t *testing.T) {
	rs := redistest.Start(t)
	spec := map[string]any{"targets": []map[string]string{{"url": "http://127.0.0.1:9/"}}}
	status := func(m *Main) int {
		t.Helper()
		resp, b := postJSON(t, m.URL()+"/v1/jobs", spec)
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("POST = %d %s, want 202 or 401", resp.StatusCode, b)
		}
		return resp.StatusCode
	}
	serve := startMain(t, func(c *config.Config) { c.Command, c.RedisURL = config.CommandServe, rs.URL() })
	if got := status(serve); got != http.StatusUnauthorized {
		t.Errorf("serve on 127.0.0.1 with no key = %d, want 401", got)
	}
	all := func() *Main {
		return startMain(t, func(c *config.Config) { c.RedisURL = rs.URL() })
	}
	if got := status(all()); got != http.StatusAccepted {
		t.Errorf("all-in-one with no key ever created = %d, want 202", got)
	}
	code, _, errOut := keysCLI(t, rs.URL(), "add", "first")
	if code != clicmd.KeysExitOK {
		t.Fatalf("keys add = %d %s", code, errOut)
	}
	keys, err := store.New(rs.Client(t), store.Options{}).ListKeys(t.Context())
	if err != nil || len(keys) != 1 {
		t.Fatalf("ListKeys = %v, %v, want the one key", keys, err)
	}
	if code, _, errOut := keysCLI(t, rs.URL(), "revoke", keys[0].ID); code != clicmd.KeysExitOK {
		t.Fatalf("keys revoke = %d %s", code, errOut)
	}
	if got := status(all()); got != http.StatusUnauthorized {
		t.Errorf("all-in-one restarted after its only key was revoked = %d, want 401: open mode ends for good", got)
	}
}
