package githubapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRefusesWhatTheDescriptionRefuses: requests that GitHub's
// description does not admit are refused and reported, so a client bug
// shows as a problem rather than as a served request.
func TestRefusesWhatTheDescriptionRefuses(t *testing.T) {
	const sha = "9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"
	tests := []struct {
		name, method, path, body string
		noAgent                  bool
		code                     int
		problem                  bool
	}{
		{"valid status", "POST", "repos/acme/shop/statuses/" + sha, `{"state":"pending","context":"benchq/x"}`, false, 201, false},
		{"unknown state", "POST", "repos/acme/shop/statuses/" + sha, `{"state":"running","context":"benchq/x"}`, false, 422, true},
		{"status without state", "POST", "repos/acme/shop/statuses/" + sha, `{"context":"benchq/x"}`, false, 422, true},
		{"comment without body", "POST", "repos/acme/shop/issues/12/comments", `{}`, false, 422, true},
		{"comment id not a number", "PATCH", "repos/acme/shop/issues/comments/abc", `{"body":"x"}`, false, 422, true},
		{"per_page not a number", "GET", "repos/acme/shop/issues/12/comments?per_page=all", ``, false, 422, true},
		{"since not a time", "GET", "repos/acme/shop/issues/12/comments?since=yesterday", ``, false, 422, true},
		{"no such operation", "DELETE", "repos/acme/shop/statuses/" + sha, ``, false, 404, true},
		{"no User-Agent", "POST", "repos/acme/shop/issues/12/comments", `{"body":"x"}`, true, 400, true},
		{"valid comment", "POST", "repos/acme/shop/issues/12/comments", `{"body":"x"}`, false, 201, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, "tok", "")
			req, err := http.NewRequestWithContext(t.Context(), tt.method, s.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer tok")
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.noAgent {
				req.Header["User-Agent"] = []string{""}
			} else {
				req.Header.Set("User-Agent", "test")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || (len(s.Problems()) > 0) != tt.problem {
				t.Errorf("%s %s = %d %s, problems %v; want %d, problem %v", tt.method, tt.path, resp.StatusCode, b, s.Problems(), tt.code, tt.problem)
			}
		})
	}
}
