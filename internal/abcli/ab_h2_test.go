package abcli

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/testservers"
)

// TestABHTTP2 runs `benchq ab --http2` on Go's HTTP/2 server over TLS and
// h2c: the report keeps ab's shape (Server Software and Document Length
// from the first response) and says the connections and streams used.
func TestABHTTP2(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "goh2/2.0 (test)")
		_, _ = w.Write([]byte(strings.Repeat("y", 500)))
	})
	for _, tc := range []struct {
		name string
		srv  *testservers.H2Server
	}{
		{"tls", testservers.StartH2TLS(t, h)},
		{"h2c", testservers.StartH2C(t, h)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runABTest(t, context.Background(), "-q", "--http2", "-c", "3", "--max-streams", "4", "-n", "240", tc.srv.URL+"/h2doc")
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			for _, line := range []string{
				"Server Software:        goh2/2.0\n",
				"Document Path:          /h2doc\n",
				"Document Length:        500 bytes\n",
				"Concurrency Level:      3\n",
				"HTTP/2 connections:     3 (at most 4 streams each)\n",
				"Complete requests:      240\n",
				"Failed requests:        0\n",
				"HTML transferred:       120000 bytes\n",
			} {
				if !strings.Contains(stdout, line) {
					t.Errorf("stdout has no line %q:\n%s", line, stdout)
				}
			}
			if got := tc.srv.Protos()["HTTP/2.0"]; got != 240 {
				t.Errorf("server saw %d HTTP/2 requests, want 240", got)
			}
		})
	}
}
