package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

const (
	// streamsPerKey event streams are opened by each of two keys; the
	// per-key cap is raised to exactly that, so one more is refused.
	streamsPerKey = 100
	// bystanderP99 is the bound on a third key's GET /v1/jobs/{id} while
	// the streams are open: generous for a loaded 2-core machine, and far
	// below the seconds such a GET took when each stream held a pooled
	// Redis connection.
	bystanderP99 = 200 * time.Millisecond
	// measureFor is how long the bystander's GETs (one every 25 ms) and
	// /readyz (every 250 ms) are measured.
	measureFor = 8 * time.Second
	// revokeBound is how soon a revoked key's streams must end.
	revokeBound = time.Second
)

// TestStreamsDoNotStarveOtherTenants: 200 open event streams from two
// keys, on a real `benchq serve`, worker and redis-server, one of the
// jobs running (so events flow); a third key's GET stays fast and
// /readyz stays 200, a stream past the key's cap is refused with 429,
// and revoking a key with `benchq keys revoke` ends its streams within
// a second while the other key's stay open.
func TestStreamsDoNotStarveOtherTenants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchq serve, a worker and redis-server with 200 event streams; skipped with -short")
	}
	rs := redistest.Start(t)
	bin := proctest.Build(t)
	env := append(os.Environ(), "BENCHQ_REDIS_URL="+rs.URL(), "BENCHQ_ALLOW_TARGETS=127.0.0.0/8",
		"BENCHQ_MAX_STREAMS_PER_KEY="+strconv.Itoa(streamsPerKey), "BENCHQ_SHUTDOWN_TIMEOUT=5s")
	api := proctest.Start(t, bin, env, "serve", "--addr", "127.0.0.1:0")
	addr := api.WaitAddr(t)
	proctest.Start(t, bin, env, "worker")
	target := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok") })

	a := proctest.KeyedBase(t, bin, rs.URL(), addr, "streamer-a")
	b := proctest.KeyedBase(t, bin, rs.URL(), addr, "streamer-b")
	c := proctest.KeyedBase(t, bin, rs.URL(), addr, "bystander")
	// A light open-model run that outlasts the test, so progress events
	// flow to a's streams; b's job waits behind it with idle streams.
	long := `{"targets":[{"url":"` + target + `/"}],"sweep":{"concurrency":[1],"rate":[20],"duration":["90s"]}}`
	ja, jb := submit(t, a, long), submit(t, b, long)
	jc := submit(t, c, `{"targets":[{"url":"`+target+`/"}],"sweep":{"concurrency":[1],"requests":[10]}}`)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	streamsA := openStreams(t, ctx, a, ja, streamsPerKey)
	streamsB := openStreams(t, ctx, b, jb, streamsPerKey)
	resp := stream(t, ctx, a, ja)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("stream %d of key a = %d (Retry-After %q), want 429 with Retry-After", streamsPerKey+1, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp.Body.Close()

	lat, notReady := measureBystander(t, "http://"+addr, c, jc)
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	t.Logf("bystander GET /v1/jobs/{id} with %d streams open: %d requests, p50 %s, p99 %s, max %s",
		2*streamsPerKey, len(lat), p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), slices.Max(lat).Round(10*time.Microsecond))
	if p99 > bystanderP99 {
		t.Errorf("bystander p99 = %s with %d streams open, want under %s", p99, 2*streamsPerKey, bystanderP99)
	}
	if len(notReady) > 0 {
		t.Errorf("/readyz failed %d times while the streams were open: %v", len(notReady), notReady)
	}
	for _, s := range append(streamsA, streamsB...) {
		if s.ended() {
			t.Fatalf("a stream ended on its own before the revocation")
		}
	}

	revoked := revoke(t, bin, rs.URL(), "streamer-a")
	var slowest time.Duration
	for i, s := range streamsA {
		select {
		case <-s.done:
			slowest = max(slowest, s.endedAt.Sub(revoked))
		case <-time.After(time.Until(revoked.Add(revokeBound))):
			t.Fatalf("stream %d of the revoked key still open %s after `benchq keys revoke` returned", i, revokeBound)
		}
	}
	t.Logf("all %d streams of the revoked key closed within %s of the revocation", streamsPerKey, slowest.Round(time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	for _, s := range streamsB {
		if s.ended() {
			t.Fatal("a stream of the other key ended with the revocation")
		}
	}
	cancel()
	api.Stop(t)
}

// submit creates a job with the key in base and returns its id.
func submit(t *testing.T, base, spec string) string {
	t.Helper()
	resp, body := proctest.Call(t, http.MethodPost, base+"/v1/jobs", []byte(spec))
	var j struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &j) != nil {
		t.Fatalf("POST /v1/jobs = %d %s, want 202", resp.StatusCode, body)
	}
	return j.ID
}

// openStream is one open event stream, read to its end in the background.
type openStream struct {
	done    chan struct{}
	endedAt time.Time
}

func (s *openStream) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// streamClient has no overall timeout (streams last), but a stream's
// headers must come within 10 s: a server whose streams starve its Redis
// pool leaves the next one hanging.
var streamClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, ResponseHeaderTimeout: 10 * time.Second}}

func stream(t *testing.T, ctx context.Context, base, id string) *http.Response {
	t.Helper()
	req := proctest.Request(t, http.MethodGet, base+"/v1/jobs/"+id+"/events", nil).WithContext(ctx)
	resp, err := streamClient.Do(req)
	if err != nil {
		t.Fatalf("GET events: %v", err)
	}
	return resp
}

// openStreams opens n streams of job id, each answered 200 before it
// returns.
func openStreams(t *testing.T, ctx context.Context, base, id string, n int) []*openStream {
	t.Helper()
	var out []*openStream
	for range n {
		resp := stream(t, ctx, base, id)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("stream %d of job %s = %d %s, want 200", len(out)+1, id, resp.StatusCode, b)
		}
		s := &openStream{done: make(chan struct{})}
		go func() {
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
			s.endedAt = time.Now()
			close(s.done)
		}()
		out = append(out, s)
	}
	return out
}

// measureBystander GETs job id with the key in base every 25 ms and
// /readyz every 250 ms for measureFor; it returns the GETs' latencies and
// what /readyz answered other than 200.
func measureBystander(t *testing.T, api, base, id string) (lat []time.Duration, notReady []string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := time.Now().Add(measureFor)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(stop) {
			resp, err := client.Get(api + "/readyz")
			mu.Lock()
			switch {
			case err != nil:
				notReady = append(notReady, err.Error())
			case resp.StatusCode != http.StatusOK:
				notReady = append(notReady, resp.Status)
			}
			mu.Unlock()
			if err == nil {
				resp.Body.Close()
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(stop) {
		<-tick.C
		req := proctest.Request(t, http.MethodGet, base+"/v1/jobs/"+id, nil)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("bystander GET: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("bystander GET = %d, want 200", resp.StatusCode)
		}
		lat = append(lat, d)
	}
	wg.Wait()
	return lat, notReady
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

// revoke finds the key named name with `benchq keys list`, revokes it
// with `benchq keys revoke` and returns when that command returned.
func revoke(t *testing.T, bin, redisURL, name string) time.Time {
	t.Helper()
	env := append(os.Environ(), "BENCHQ_REDIS_URL="+redisURL)
	list := exec.Command(bin, "keys", "list")
	list.Env = env
	out, err := list.Output()
	if err != nil {
		t.Fatalf("benchq keys list: %v", err)
	}
	var id string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == name {
			id = f[0]
		}
	}
	if id == "" {
		t.Fatalf("benchq keys list does not show %s:\n%s", name, out)
	}
	rev := exec.Command(bin, "keys", "revoke", id)
	rev.Env = env
	if out, err := rev.CombinedOutput(); err != nil {
		t.Fatalf("benchq keys revoke %s: %v\n%s", id, err, out)
	}
	return time.Now()
}
