package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	benchqanalysis "github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestLimitedByClient runs the production shape (redis-server, `benchq
// serve`, one `benchq worker`) with the worker pinned to the first core
// and favoured there (nice -20 in a session of its own, so the other work
// of a shared machine does not take its core), against nginx pinned to
// the second, favoured as well (a target starved by the machine's other
// work would keep the client waiting on the network, not on its CPU),
// watched by process-exporter for its CPU. Without keep-alive, 32
// connections each opened and closed per request cost the client more
// than nginx's answer of a small file costs the server (measured here:
// the client 0.9 of its core and waiting, nginx 0.7 of its own), so the
// load generator is the limit: the
// analysis must say limited_by "client" at the highest concurrency and
// the saturation sentence that the load generator was short of CPU. Each
// point runs twice: the analysis marks a point whose client was short of
// CPU in some repeat, so one run the machine disturbs does not decide it.
func TestLimitedByClient(t *testing.T) {
	if testing.Short() {
		t.Skip("four 1.5 s runs with the load generator pinned and favoured")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs two cores: one for the target, one for the client")
	}
	bin := buildBenchq(t)
	rs := redistest.Start(t)
	se := startServe(t, rs.URL())
	cmd := testservers.FavouredCommand(t, "0", bin, "worker")
	cmd.Env = se.env
	w := proctest.StartCmd(t, cmd, "benchq worker")
	testservers.FavourStarted(w.Pid())

	srv := testservers.FavouredNginx(t, testservers.Files{"index.html": bytes.Repeat([]byte("x"), 1024)}, "1")
	url := srv.URL + "/index.html"
	// process-exporter counts this nginx's own CPU, found by its
	// configuration's path: the core it runs on is also lent, at low
	// priority, to whatever else the machine runs.
	conf := filepath.Join(t.TempDir(), "process-exporter.yml")
	match := fmt.Sprintf("process_names:\n  - name: nginx\n    cmdline: [%q]\n", regexp.QuoteMeta(srv.Dir))
	if err := os.WriteFile(conf, []byte(match), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := testservers.StartExporter(t, "prometheus-process-exporter", "prometheus-process-exporter", "-web.listen-address", "-config.path", conf)
	pidText, err := os.ReadFile(filepath.Join(srv.Dir, "nginx.pid"))
	if err != nil {
		t.Fatal(err)
	}
	nginxPid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("nginx.pid: %q", pidText)
	}
	nginxBefore := testservers.ProcessCPU(t, nginxPid)
	j := submit(t, se.base, map[string]any{
		"targets": []map[string]any{{
			"name": "nginx", "url": url,
			"monitor": map[string]any{"prometheus": exp.URL, "cores": 1},
		}},
		"sweep": map[string]any{"concurrency": []int{8, 32}, "duration": []string{"1500ms"}, "repeats": 2},
	})
	if got := waitJob(t, se.base, j.ID, 90*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}

	t.Logf("nginx's own CPU (/proc) over the job: %.3f s", testservers.ProcessCPU(t, nginxPid)-nginxBefore)
	resp, body := call(t, http.MethodGet, se.base+"/v1/jobs/"+j.ID+"/results", nil)
	var res struct {
		Runs     []job.Run    `json:"runs"`
		Analysis job.Analysis `json:"analysis"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &res) != nil || len(res.Runs) != 4 {
		t.Fatalf("GET results = %d %.500s; want four runs", resp.StatusCode, body)
	}
	for _, r := range res.Runs {
		a := r.Result
		var serverBusy float64
		if r.Server != nil && r.Server.CoresBusy != nil {
			serverBusy = *r.Server.CoresBusy
		}
		t.Logf("c = %d: %.0f req/s; client %.2f of %d cores used (spin %.3f s), %.3f s waiting for a CPU over %.3f s, saturated %v; nginx %.2f of its core busy",
			r.Concurrency, a.RequestsPerSecond, (a.ClientCPUS-a.ClientSpinS)/a.TimeTakenS, a.ClientCores,
			a.ClientSpinS, a.ClientCPUWaitS, a.TimeTakenS, a.ClientSaturated, serverBusy)
	}
	var top *job.PointSummary
	for i, p := range res.Analysis.Points {
		if p.Point.Concurrency == 32 {
			top = &res.Analysis.Points[i]
		}
	}
	if top == nil {
		t.Fatalf("analysis has no point at c = 32: %+v", res.Analysis.Points)
	}
	if top.ServerCPUShare == nil {
		t.Errorf("c = 32: no server CPU share: the monitor recorded nothing")
	}
	if top.LimitedBy != benchqanalysis.LimitedByClient {
		t.Errorf("c = 32: limited_by = %q (client saturated %v, server cpu share %+v), want %q",
			top.LimitedBy, top.ClientSaturated, top.ServerCPUShare, benchqanalysis.LimitedByClient)
	}
	if len(res.Analysis.Saturation) != 1 || !strings.Contains(res.Analysis.Saturation[0].Sentence, "the load generator was short of CPU from c = ") {
		t.Errorf("saturation = %+v, want one sentence saying the load generator was short of CPU", res.Analysis.Saturation)
	} else {
		t.Logf("sentence: %s", res.Analysis.Saturation[0].Sentence)
	}
}
