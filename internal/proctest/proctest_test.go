package proctest

import (
	"net/http"
	"os"
	"testing"

	"github.com/benchq/benchq/internal/redistest"
)

func TestMain(m *testing.M) { Main(m) }

// TestServeWithKey runs `benchq serve` on a real redis-server: without a
// key the API refuses, with the key KeyedBase made it answers.
func TestServeWithKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchq; skipped with -short")
	}
	rs := redistest.Start(t)
	bin := Build(t)
	env := append(os.Environ(), "BENCHQ_REDIS_URL="+rs.URL())
	api := Start(t, bin, env, "serve", "--addr", "127.0.0.1:0")
	addr := api.WaitAddr(t)
	if resp, b := Call(t, http.MethodGet, "http://"+addr+"/v1/jobs", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /v1/jobs without a key = %d %s, want 401", resp.StatusCode, b)
	}
	base := KeyedBase(t, bin, rs.URL(), addr, "proctest")
	if resp, b := Call(t, http.MethodGet, base+"/v1/jobs", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/jobs with a key = %d %s, want 200", resp.StatusCode, b)
	}
	api.Stop(t)
}
