package testservers

import (
	"io"
	"net/http"
	"testing"
)

// TestServersServeFiles starts each server and fetches a file from it.
func TestServersServeFiles(t *testing.T) {
	want := "<p>benchq</p>\n"
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			srv := s.Start(t, Files{"a.html": []byte(want)})
			resp, err := http.Get(srv.URL + "/a.html")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || string(body) != want {
				t.Errorf("GET %s/a.html = %d %q (%v), want 200 %q", srv.URL, resp.StatusCode, body, err, want)
			}
		})
	}
}
