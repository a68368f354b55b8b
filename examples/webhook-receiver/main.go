// Command webhook-receiver is a minimal receiver of benchq's webhooks: it
// verifies each delivery's Standard Webhooks signature with the reference
// Go library (not with benchq's own code), answers 204 to a valid one and
// 401 to anything else, and prints the event type, job id and verdict.
//
//	WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:9000
//
// then submit a job with "webhook": {"url": "http://127.0.0.1:9000/hooks/benchq"}.
// The secret is the webhook_secret the submission returned (benchq submit --webhook-secret-file writes it to a file), or the
// one set on your API key.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// maxBody bounds a delivery; benchq keeps its payloads under 20 kB.
const maxBody = 1 << 20

// event is the part of benchq's payload this receiver reads.
type event struct {
	Type string `json:"type"`
	Data struct {
		JobID   string `json:"job_id"`
		Status  string `json:"status"`
		Verdict string `json:"verdict"`
	} `json:"data"`
}

// receiver verifies and logs deliveries.
type receiver struct {
	wh  *standardwebhooks.Webhook
	out io.Writer
}

func newReceiver(secret string, out io.Writer) (*receiver, error) {
	if secret == "" {
		return nil, errors.New("WEBHOOK_SECRET is empty: set it to the job's whsec_... secret")
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	return &receiver{wh: wh, out: out}, nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	// The signature covers the exact bytes: verify before decoding.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	// Verify checks the signature and that webhook-timestamp is within
	// 5 minutes, which stops replays of old deliveries. A receiver with
	// side effects should also drop a webhook-id it has already handled:
	// benchq sends the same id on every retry.
	if err := rc.wh.Verify(body, r.Header); err != nil {
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "payload is not JSON", http.StatusBadRequest)
		return
	}
	verdict := ev.Data.Verdict
	if verdict == "" {
		verdict = "none"
	}
	fmt.Fprintf(rc.out, "%s job %s status %s verdict %s (webhook-id %s)\n",
		ev.Type, ev.Data.JobID, ev.Data.Status, verdict, r.Header.Get("webhook-id"))
	w.WriteHeader(http.StatusNoContent)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	path := flag.String("path", "/hooks/benchq", "URL path of the webhook")
	flag.Parse()
	rc, err := newReceiver(os.Getenv("WEBHOOK_SECRET"), os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(*path, rc)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
	log.Printf("webhook-receiver: listening on http://%s%s", *addr, *path)
	log.Fatal(srv.ListenAndServe())
}
