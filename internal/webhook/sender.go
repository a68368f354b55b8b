package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Outcome is how one attempt is judged.
type Outcome string

const (
	// OutcomeDelivered: a 2xx answer.
	OutcomeDelivered Outcome = "delivered"
	// OutcomeRetry: any other answer (3xx included: redirects are not
	// followed), or none.
	OutcomeRetry Outcome = "retry"
	// OutcomeGone: 410, the receiver asks never to be called again.
	OutcomeGone Outcome = "gone"
	// OutcomeRejected: a forge refused a status or comment (a token
	// refused, a repository not found, a request it finds invalid), or
	// there was no token to send it with: another try would be refused
	// alike, so none follows.
	OutcomeRejected Outcome = "rejected"
)

// DefaultTimeout bounds one attempt, from dial to the last byte read.
const DefaultTimeout = 10 * time.Second

// MaxLoggedBody is how much of an answer's body an attempt keeps.
const MaxLoggedBody = 1 << 10

// userAgent names benchq to receivers.
const userAgent = "benchq-webhook/1"

// DialContext opens a connection; netguard.Dialer.DialContext fits.
type DialContext func(ctx context.Context, network, address string) (net.Conn, error)

// NewClient returns the HTTP client deliveries use: every connection
// through dial (the address policy), no proxy from the environment (it
// would dial the proxy, not the checked receiver), no redirects followed,
// and timeout (zero: DefaultTimeout) on the whole request.
func NewClient(dial DialContext, timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dial,
			TLSHandshakeTimeout: timeout,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Sender makes delivery attempts.
type Sender struct {
	Client *http.Client
	// Now is the clock for webhook-timestamp; nil means time.Now.
	Now func() time.Time
}

// Send makes one signed attempt: POST body to url with webhook-id id and a
// fresh webhook-timestamp, as the specification wants for retries.
func (s *Sender) Send(ctx context.Context, url, id string, sig *Signer, body []byte) Attempt {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	start := time.Now()
	ts := now()
	a := Attempt{At: ts.UTC(), Outcome: OutcomeRetry}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		a.Error = fmt.Sprintf("bad request: %v", err)
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig.Sign(id, ts, body))
	resp, err := s.Client.Do(req)
	if err != nil {
		a.DurationMs = ms(time.Since(start))
		a.Error = describe(err)
		return a
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, MaxLoggedBody))
	_ = resp.Body.Close()
	a.DurationMs = ms(time.Since(start))
	a.StatusCode, a.Response = resp.StatusCode, string(head)
	var wait time.Duration
	a.Outcome, wait = Classify(resp.StatusCode, resp.Header, time.Now())
	a.RetryAfterMs = wait.Milliseconds()
	return a
}

// Classify judges an answer: 2xx delivered, 410 gone, anything else retry,
// with the Retry-After wait of a 429 or 503 when it has one.
func Classify(code int, h http.Header, now time.Time) (Outcome, time.Duration) {
	switch {
	case code >= 200 && code < 300:
		return OutcomeDelivered, 0
	case code == http.StatusGone:
		return OutcomeGone, 0
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if d, ok := RetryAfter(h.Get("Retry-After"), now); ok {
			return OutcomeRetry, d
		}
	}
	return OutcomeRetry, 0
}

// describe words a transport error for the attempt log, naming a timeout
// as such (the error text of net/http varies with where it struck).
func describe(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return "timeout: " + err.Error()
	}
	return err.Error()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
