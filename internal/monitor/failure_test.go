package monitor_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/testservers"
)

func answer(status, body string) []byte {
	return []byte("HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body)
}

// TestScrapeFailuresAreNamed: an endpoint the address policy refuses, one
// that hangs, one that answers garbage, an error status or too much: each
// scrape fails with ErrScrape and a message naming the problem, and a
// recording of it counts every scrape failed and says why, never more.
func TestScrapeFailuresAreNamed(t *testing.T) {
	tests := []struct {
		name string
		url  func(t *testing.T) string
		want string
	}{
		{"refused by the policy", func(*testing.T) string { return "http://10.0.0.1:9100/metrics" }, "10.0.0.1"},
		{"hangs", func(t *testing.T) string { return testservers.StartHostile(t, testservers.Silent()).URL }, "no answer within 1s"},
		{"garbage", func(t *testing.T) string {
			return testservers.StartHostile(t, testservers.Answer("garbage", answer("200 OK", "this is { not metrics\n"))).URL
		}, "is not Prometheus text format: line 1"},
		{"503", func(t *testing.T) string {
			return testservers.StartHostile(t, testservers.Answer("503", answer("503 Service Unavailable", "down\n"))).URL
		}, "answered 503 Service Unavailable"},
		{"too large", func(t *testing.T) string { return testservers.StartHostile(t, testservers.HugeBody(8<<20)).URL }, "answered more than"},
		{"not HTTP", func(t *testing.T) string { return testservers.StartHostile(t, testservers.GarbageStatus()).URL }, "malformed HTTP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			_, err := scraper().Scrape(context.Background(), url)
			if !errors.Is(err, monitor.ErrScrape) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Scrape(%s) = %v, want an ErrScrape saying %q", url, err, tc.want)
			}
			rec := monitor.Start(context.Background(), scraper(), monitor.Spec{Prometheus: url}, 200*time.Millisecond)
			time.Sleep(300 * time.Millisecond)
			s := rec.Stop(context.Background()).Server(monitor.Run{Requests: 10})
			t.Logf("%d scrapes: %s", s.Scrapes, s.Message)
			if s.Scrapes < 2 || s.ScrapeErrors != s.Scrapes || !strings.Contains(s.Message, tc.want) || s.CPUSeconds != nil {
				t.Fatalf("server = %+v, want every scrape failed, the message saying %q, no CPU", s, tc.want)
			}
		})
	}
}

// TestExporterKilledMidRun: node_exporter dies half way through a
// recording; its failed scrapes are counted and named, and what it said
// before dying still gives the CPU.
func TestExporterKilledMidRun(t *testing.T) {
	exp := testservers.StartExporter(t, "prometheus-node-exporter", "prometheus-node-exporter", "--web.listen-address",
		"--collector.disable-defaults", "--collector.cpu")
	rec := monitor.Start(context.Background(), scraper(), monitor.Spec{Prometheus: exp.URL}, 100*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	exp.Kill()
	time.Sleep(500 * time.Millisecond)
	s := rec.Stop(context.Background()).Server(monitor.Run{Requests: 1})
	t.Logf("scrapes %d, errors %d: %s", s.Scrapes, s.ScrapeErrors, s.Message)
	// A scrape the kill cut short reads a reset, the next ones are refused.
	named := strings.Contains(s.Message, "connection refused") || strings.Contains(s.Message, "connection reset")
	if s.ScrapeErrors == 0 || s.ScrapeErrors >= s.Scrapes || !named {
		t.Fatalf("scrapes %d, errors %d, message %q: want some failed, named as refused or reset", s.Scrapes, s.ScrapeErrors, s.Message)
	}
	if s.CPUSeconds == nil {
		t.Fatalf("no CPU from the scrapes before the kill: %+v", s)
	}
}

// TestNoCPUSeries: an endpoint that answers but exposes no CPU the
// defaults know, and a selector that matches nothing: the scrapes count
// as good, and the message says what is missing and where to name it.
func TestNoCPUSeries(t *testing.T) {
	body := "# TYPE up gauge\nup 1\n# TYPE nginx_connections_active gauge\nnginx_connections_active 3\n"
	url := testservers.StartHostile(t, testservers.Answer("plain", answer("200 OK", body))).URL
	tests := []struct {
		spec monitor.Spec
		want string
	}{
		{monitor.Spec{Prometheus: url}, "exposes none of namedprocess_namegroup_cpu_seconds_total, node_cpu_seconds_total, process_cpu_seconds_total; name one in monitor.cpu"},
		{monitor.Spec{Prometheus: url, CPU: `node_cpu_seconds_total{mode="user"}`}, `CPU unknown: node_cpu_seconds_total{mode="user"} matched in fewer than two scrapes`},
	}
	for _, tc := range tests {
		rec := monitor.Start(context.Background(), scraper(), tc.spec, 100*time.Millisecond)
		time.Sleep(150 * time.Millisecond)
		s := rec.Stop(context.Background()).Server(monitor.Run{Requests: 1})
		if s.ScrapeErrors != 0 || s.CPUSeconds != nil || !strings.Contains(s.Message, tc.want) {
			t.Errorf("spec %+v: server %+v, want no failed scrape, no CPU, the message saying %q", tc.spec, s, tc.want)
		}
	}
}
