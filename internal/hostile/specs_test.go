package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
)

// specBody is the API's default body limit; the hostile specs fill it.
const specBody = 1 << 20

// rssBound is what 16 concurrent hostile specs may add to the API's
// resident memory (a Kubernetes API pod has 256 MiB).
const rssBound = 64 << 20

// TestHostileSpecsKeepAPIMemoryBounded sends 16 concurrent 1 MiB hostile
// specs at a time, four times, from a default-quota key to a real
// `benchq serve`: lists as long as the body allows in each list of a spec,
// nesting far past any real spec, and thousands of distinct problems.
// Before lists were capped as they are read, one such spec cost the API
// about 160 MB and 16 of them 2.69 GB. The API's peak resident memory may
// grow by at most 64 MiB, every answer is a 4xx problem, and no job is
// created.
func TestHostileSpecsKeepAPIMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchq serve and redis-server; skipped with -short")
	}
	rs := redistest.Start(t)
	bin := proctest.Build(t)
	api := proctest.Start(t, bin, append(os.Environ(), "BENCHQ_REDIS_URL="+rs.URL()), "serve", "--addr", "127.0.0.1:0")
	addr := api.WaitAddr(t)
	base := proctest.KeyedBase(t, bin, rs.URL(), addr, "hostile")
	// Warm the API up with one small refused spec, so the baseline holds
	// the HTTP server and the handlers.
	if resp, b := proctest.Call(t, http.MethodPost, base+"/v1/jobs", []byte(`{"targets":[]}`)); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("warm-up POST /v1/jobs = %d %s, want 422", resp.StatusCode, b)
	}

	bodies := hostileSpecs()
	before := procStatus(t, api.Pid(), "VmRSS")
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() { peak <- sampleRSS(api.Pid(), stop) }()
	const rounds, concurrent = 4, 16
	start := time.Now()
	var mu sync.Mutex
	statuses := map[int]int{}
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range concurrent {
			body := bodies[(round*concurrent+i)%len(bodies)]
			wg.Go(func() {
				code := checkRefused(t, base, body)
				mu.Lock()
				statuses[code]++
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	close(stop)
	sampled := <-peak
	hwm := procStatus(t, api.Pid(), "VmHWM")
	growth := max(sampled, hwm) - before
	t.Logf("%d rounds of %d concurrent specs of up to %d bytes (%d shapes) in %s, answers %v: API VmRSS before %d KiB, sampled peak %d KiB, VmHWM %d KiB: growth %d KiB (bound %d KiB)",
		rounds, concurrent, specBody, len(bodies), time.Since(start).Round(time.Millisecond), statuses, before>>10, sampled>>10, hwm>>10, growth>>10, rssBound>>10)
	if growth > rssBound {
		t.Errorf("API resident memory grew by %d MiB, want at most %d MiB", growth>>20, rssBound>>20)
	}

	resp, b := proctest.Call(t, http.MethodGet, base+"/v1/jobs", nil)
	var list struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if err := json.Unmarshal(b, &list); resp.StatusCode != http.StatusOK || err != nil || len(list.Jobs) != 0 {
		t.Errorf("GET /v1/jobs = %d %s, want no job", resp.StatusCode, b)
	}

	// Past the body limit the answer is a 413 problem.
	over := []byte(`{"name":"` + strings.Repeat("x", specBody) + `"}`)
	resp, b = proctest.Call(t, http.MethodPost, base+"/v1/jobs", over)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("POST /v1/jobs of %d bytes = %d %s, want a 413 problem", len(over), resp.StatusCode, b)
	}
}

// checkRefused posts body, expects a 4xx problem and returns its status.
func checkRefused(t *testing.T, base string, body []byte) int {
	resp, b := proctest.Call(t, http.MethodPost, base+"/v1/jobs", body)
	if resp.StatusCode < 400 || resp.StatusCode > 499 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("POST /v1/jobs (%.40s…) = %d %.200s, want a 4xx problem", body, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// hostileSpecs are specs just under the body limit, each pushing one list
// of a spec (or the nesting, or the number of distinct problems) as far
// as the size allows.
func hostileSpecs() [][]byte {
	const target = `{"targets":[{"url":"http://127.0.0.1:9/"}],`
	fill := func(head, item, tail string) []byte {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; ; i++ {
			next := strings.ReplaceAll(item, "$", strconv.Itoa(i))
			if b.Len()+len(next)+len(tail)+1 > specBody-64 {
				break
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(next)
		}
		b.WriteString(tail)
		return []byte(b.String())
	}
	depth := (specBody - 128) / 2
	return [][]byte{
		fill(target+`"sweep":{"concurrency":[`, `1`, `]}}`),
		fill(target+`"sweep":{"requests":[`, `$`, `]}}`),
		fill(target+`"sweep":{"duration":[`, `"$s"`, `]}}`),
		fill(target+`"sweep":{"rate":[`, `$.5`, `]}}`),
		fill(`{"targets":[`, `{"name":"t$","url":"http://127.0.0.1:9/$"}`, `]}`),
		fill(`{"targets":[{"http_load":"-parallel 1 -fetches 1","urls":[`, `"http://127.0.0.1:9/$"`, `]}]}`),
		fill(target+`"request":{"headers":{`, `"X-$":"v"`, `}}}`),
		fill(target+`"labels":{`, `"l$":"v"`, `}}`),
		fill(target+`"thresholds":[`, `"p$_ms < 1"`, `]}`),
		fill(target+`"comparisons":[`, `{"target":"t$","baseline":"b"}`, `]}`),
		fill(target+`"webhook":{"url":"http://127.0.0.1:9/","events":[`, `"e$"`, `]}}`),
		fill(target+`"request":{"tls":{"cipher_suites":[`, `"S$"`, `]}}}`),
		fill(target+`"compare_to":{"labels":{`, `"l$":"v"`, `}}}`),
		fill(`{"targets":[{"ab":"-n 10 -c 1`, ` -H X-$:v`, ` http://127.0.0.1:9/"}]}`),
		[]byte(target + `"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`),
		fill(target, `"f$":[0]`, `}`),
		// Distinct problems past the cap of 100 in lists within their limits.
		fill(`{"targets":[`, `{"name":"t$","url":"http://127.0.0.1:9/","request":{"headers":{"A":1,"B":2,"C":3}}}`, `]}`),
	}
}

// sampleRSS reads pid's VmRSS every few milliseconds until stop closes
// and returns the largest, in bytes.
func sampleRSS(pid int, stop <-chan struct{}) int64 {
	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if v, err := readStatus(pid, "VmRSS"); err == nil {
			peak = max(peak, v)
		}
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}

// procStatus reads a field of /proc/PID/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	v, err := readStatus(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readStatus(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status %s: %w", pid, field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
