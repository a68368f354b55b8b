package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/apikey"
)

// send is one request with exactly the headers given ("Host" sets the
// Host header), as a browser or an attacker's client would send it.
func send(t *testing.T, base, method, path, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return roundTrip(t, req)
}

func (e *testEnv) queued() int {
	return len(e.queue.Tasks())
}

// TestOpenModeRefusesWhatAPageCouldSend: without a key, a POST that a
// form or a no-cors fetch of another site could send (a form content
// type, or none) is 415, a request that says it comes from another
// origin is 403, and neither creates or enqueues anything; JSON from
// curl, the CLI or the dashboard goes through.
func TestOpenModeRefusesWhatAPageCouldSend(t *testing.T) {
	json := map[string]string{"Content-Type": "application/json"}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name   string
		header func(self string) map[string]string
		status int
		slug   string
	}{
		{"json", func(string) map[string]string { return json }, http.StatusAccepted, ""},
		{"json with charset", func(string) map[string]string {
			return map[string]string{"Content-Type": "application/json; charset=utf-8"}
		}, http.StatusAccepted, ""},
		{"a +json type", func(string) map[string]string {
			return map[string]string{"Content-Type": "application/vnd.benchq+json"}
		}, http.StatusAccepted, ""},
		{"json from the API's own origin", func(self string) map[string]string {
			return with(json, "Origin", self, "Sec-Fetch-Site", "same-origin")
		}, http.StatusAccepted, ""},
		{"text/plain (a no-cors fetch, a text/plain form)", func(string) map[string]string {
			return map[string]string{"Content-Type": "text/plain;charset=UTF-8"}
		}, http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"form-urlencoded", func(string) map[string]string {
			return map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		}, http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"multipart", func(string) map[string]string {
			return map[string]string{"Content-Type": "multipart/form-data; boundary=x"}
		}, http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"no content type", func(string) map[string]string { return nil }, http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"json but not a type (application/jsonx)", func(string) map[string]string {
			return map[string]string{"Content-Type": "application/jsonx"}
		}, http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"json from another origin", func(string) map[string]string {
			return with(json, "Origin", "http://evil.example")
		}, http.StatusForbidden, "cross-site-request"},
		{"json from another port of the same host", func(self string) map[string]string {
			u, _ := url.Parse(self)
			return with(json, "Origin", "http://"+u.Hostname()+":1")
		}, http.StatusForbidden, "cross-site-request"},
		{"json from an opaque origin", func(string) map[string]string {
			return with(json, "Origin", "null")
		}, http.StatusForbidden, "cross-site-request"},
		{"Sec-Fetch-Site cross-site", func(string) map[string]string {
			return with(json, "Sec-Fetch-Site", "cross-site")
		}, http.StatusForbidden, "cross-site-request"},
		{"Sec-Fetch-Site same-site (localhost:3000 to localhost:8080)", func(string) map[string]string {
			return with(json, "Sec-Fetch-Site", "same-site")
		}, http.StatusForbidden, "cross-site-request"},
		{"a form from another origin", func(string) map[string]string {
			return map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
		}, http.StatusForbidden, "cross-site-request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t, nil)
			resp, body := send(t, env.url, http.MethodPost, "/v1/jobs", validSpec, tt.header(env.url))
			if resp.StatusCode != tt.status {
				t.Fatalf("POST /v1/jobs = %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.slug == "" {
				if env.queued() != 1 {
					t.Errorf("accepted POST enqueued %d tasks, want 1", env.queued())
				}
				return
			}
			p := problem(t, resp, body)
			if p.Type != problemBase+tt.slug || !strings.Contains(p.Detail, "without an API key") {
				t.Errorf("problem = %+v, want type %s saying what the open mode needs", p, tt.slug)
			}
			if tt.status == http.StatusUnsupportedMediaType && !strings.Contains(p.Detail, "Content-Type: application/json") {
				t.Errorf("415 detail %q does not say what to send", p.Detail)
			}
			if n, q := len(env.store.jobs), env.queued(); n != 0 || q != 0 {
				t.Errorf("refused POST left %d jobs and %d tasks, want none", n, q)
			}
		})
	}
}

// TestOpenModeOtherMethods: a body-less POST needs JSON too (a no-cors
// fetch can send one); PUT, PATCH and DELETE, which no page of another
// origin sends without a preflight, need no content type, but are
// refused when they say they come from another origin; reads are free.
func TestOpenModeOtherMethods(t *testing.T) {
	env := newTestEnv(t, nil)
	resp, body := env.do(t, http.MethodPost, "/v1/jobs", validSpec)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs = %d %s", resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	tests := []struct {
		method, path string
		header       map[string]string
		want         int
	}{
		{http.MethodPost, "/v1/schedules/x/pause", nil, http.StatusUnsupportedMediaType},
		{http.MethodPost, "/v1/schedules/x/pause", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{http.MethodDelete, loc, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{http.MethodPut, loc + "/pin", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{http.MethodGet, loc, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusOK},
		{http.MethodDelete, loc, nil, http.StatusAccepted},
	}
	for _, tt := range tests {
		resp, body := send(t, env.url, tt.method, tt.path, "", tt.header)
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s %v = %d %s, want %d", tt.method, tt.path, tt.header, resp.StatusCode, body, tt.want)
		}
	}
}

// TestKeyedModeTakesAnyContentType: with a key the request is the key's,
// which no page of another site can attach, so keyed clients keep
// sending what they sent.
func TestKeyedModeTakesAnyContentType(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, key := env.addKey(t, "alice", false, apikey.Quota{})
	resp, body := send(t, env.url, http.MethodPost, "/v1/jobs", okSpec, map[string]string{"Authorization": "Bearer " + key, "Content-Type": "text/plain"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("keyed text/plain POST = %d %s, want 202", resp.StatusCode, body)
	}
	// The open mode is over: the same request without the key is a 401,
	// never a 415 that would suggest a keyless retry.
	resp, body = send(t, env.url, http.MethodPost, "/v1/jobs", okSpec, map[string]string{"Content-Type": "text/plain"})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("keyless POST after the first key = %d %s, want 401", resp.StatusCode, body)
	}
}

// TestNoCORSGranted: a preflight gets no Access-Control-Allow-* header, so
// a browser never sends another origin's JSON POST or DELETE.
func TestNoCORSGranted(t *testing.T) {
	env := newTestEnv(t, nil)
	for _, path := range []string{"/v1/jobs", "/v1/jobs/x", "/v1/templates/x"} {
		resp, body := send(t, env.url, http.MethodOptions, path, "", map[string]string{
			"Origin": "http://evil.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type",
		})
		for k := range resp.Header {
			if strings.HasPrefix(http.CanonicalHeaderKey(k), "Access-Control-") {
				t.Errorf("OPTIONS %s answered %s: %v (%d %s)", path, k, resp.Header[k], resp.StatusCode, body)
			}
		}
	}
}
