package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors callers test with errors.Is; an *APIError matches the
// one its status means.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Client calls one benchq server. The zero value of every optional field
// means its default.
type Client struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8080.
	BaseURL string
	// Key is sent as "Authorization: Bearer <Key>" when not empty.
	Key string
	// HTTP sends the requests. Zero means a client without an overall
	// timeout: event streams last as long as the job.
	HTTP *http.Client
	// RequestTimeout bounds every call but the event stream. Zero means 30 s.
	RequestTimeout time.Duration
	// PollInterval is how often Follow polls when it has no event stream,
	// and the first pause before it reopens a dropped one (doubling, with
	// jitter, while drops repeat, up to 30 s). Zero means 1 s.
	PollInterval time.Duration
	// IdleTimeout is how long an event stream may stay silent, heartbeats
	// included, before Follow drops it and reconnects. The server sends a
	// heartbeat every 15 s; zero means 45 s.
	IdleTimeout time.Duration
	// MaxFailures is how many calls in a row Follow lets fail (connection
	// errors and 5xx) before it gives up. Zero means 5.
	MaxFailures int
}

// New returns a client of the server at base, checking that base is an
// absolute http(s) URL.
func New(base, key string) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host:port or https://host:port", base)
	}
	return &Client{BaseURL: strings.TrimRight(base, "/"), Key: key}, nil
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return 30 * time.Second
}

// request builds a request to path (which starts with /v1/...).
func (c *Client) request(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	return req, nil
}

// send does req and returns the response if its status is 2xx; any other
// status becomes an *APIError and the body is closed.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, &UnreachableError{Server: c.BaseURL, Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, readAPIError(req, resp)
}

// call does a bounded request and decodes a JSON answer into out, keeping
// the raw body when raw is not nil.
func (c *Client) call(ctx context.Context, method, path string, body []byte, header http.Header, out any, raw *[]byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.send(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	if raw != nil {
		*raw = b
	}
	return resp.StatusCode, nil
}
