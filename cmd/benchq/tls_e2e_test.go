package main

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

// TestServiceTLSJob runs a job with request.tls through the real service
// (a redis-server, the API and a worker): a self-signed target is measured
// with insecure_skip_verify and refused, reason named, without it; the
// client key never leaves the store unredacted.
func TestServiceTLSJob(t *testing.T) {
	m := startOnRedis(t)
	self := testservers.SelfSigned(t)
	client := testservers.NewCA(t).Issue(t, "client")
	url := testservers.StartTLS(t, &tls.Config{Certificates: []tls.Certificate{self.TLS}},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("secure")) })) + "/"

	spec := map[string]any{
		"targets": []map[string]any{
			{"name": "skip", "url": url},
			{"name": "verify", "url": url, "request": map[string]any{"tls": map[string]any{"min_version": "1.2"}}},
		},
		"request": map[string]any{"tls": map[string]any{
			"insecure_skip_verify": true, "client_cert_pem": string(client.CertPEM), "client_key_pem": string(client.KeyPEM),
		}},
		"sweep":            map[string]any{"concurrency": []int{2}, "requests": []int{20}},
		"allow_no_success": true,
	}
	j := submit(t, m.URL(), spec)
	if got := waitJob(t, m.URL(), j.ID, 60*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}

	_, b := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID+"/results", nil)
	var res struct {
		Runs []struct {
			Target string `json:"target"`
			Result struct {
				CompleteRequests int            `json:"complete_requests"`
				FailedRequests   int            `json:"failed_requests"`
				TLSProtocol      string         `json:"tls_protocol"`
				TLSHandshakes    int            `json:"tls_handshakes"`
				TLSHandshakeMs   *struct{}      `json:"tls_handshake_ms"`
				TLSFailures      map[string]int `json:"tls_failures"`
			} `json:"result"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Runs) != 2 {
		t.Fatalf("results = %s (%v), want two runs", b, err)
	}
	for _, r := range res.Runs {
		switch r.Target {
		case "skip":
			if r.Result.CompleteRequests != 20 || r.Result.TLSHandshakes != 20 || r.Result.TLSHandshakeMs == nil ||
				!strings.HasPrefix(r.Result.TLSProtocol, "TLSv1.3") {
				t.Errorf("skip-verify run = %+v, want 20 complete, 20 timed handshakes over TLS 1.3", r.Result)
			}
		case "verify":
			if r.Result.CompleteRequests != 0 || r.Result.FailedRequests != 20 || r.Result.TLSFailures["unknown_authority"] != 20 {
				t.Errorf("verifying run = %+v, want 20 failures, all unknown_authority", r.Result)
			}
		}
	}

	_, b = call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID+"/report?format=markdown", nil)
	if md := string(b); !strings.Contains(md, "TLS handshake (a part of connect)") || !strings.Contains(md, "| verify | 2 | – | unknown authority: 20 |") ||
		!strings.Contains(md, "| skip | 2 | ") {
		t.Errorf("Markdown report:\n%s\nwant the TLS handshake table with both targets", md)
	}

	_, b = call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID, nil)
	if strings.Contains(string(b), "PRIVATE KEY") || !strings.Contains(string(b), `"client_key_pem":"[redacted]"`) ||
		!strings.Contains(string(b), "BEGIN CERTIFICATE") {
		t.Errorf("GET /v1/jobs/%s = %s\nwant client_key_pem redacted and the certificate shown", j.ID, b)
	}
}
