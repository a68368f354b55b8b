package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scraper defaults.
const (
	// DefaultTimeout bounds one scrape, connect to last byte: an exporter
	// answers in milliseconds, and a run waits for its first and last.
	DefaultTimeout = 2 * time.Second
	// DefaultMaxBody caps an exposition; node_exporter's full one is a
	// few hundred KB.
	DefaultMaxBody = 4 << 20
)

// ErrScrape is wrapped by every error Scrape returns.
var ErrScrape = errors.New("monitor: scrape failed")

// DialFunc opens a connection, as net.Dialer.DialContext; the worker
// passes the address policy's dialer.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// ScraperConfig configures a Scraper.
type ScraperConfig struct {
	// Dial is how the scraper connects; it must enforce the address
	// policy. Required.
	Dial DialFunc
	// Timeout bounds one scrape; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxBody caps an exposition in bytes; zero means DefaultMaxBody.
	MaxBody int64
}

// Scraper fetches and parses Prometheus text expositions. It is safe for
// concurrent use.
type Scraper struct {
	client  *http.Client
	timeout time.Duration
	maxBody int64
}

// NewScraper returns a Scraper dialing through cfg.Dial.
func NewScraper(cfg ScraperConfig) *Scraper {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	tr := &http.Transport{
		DialContext:         cfg.Dial,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  false,
	}
	return &Scraper{
		// No redirects: the policy checked the URL, and a redirect's
		// target would need the same check for no benefit.
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		timeout: cfg.Timeout,
		maxBody: cfg.MaxBody,
	}
}

// Exposition is one scrape: the metric families by name.
type Exposition map[string]*dto.MetricFamily

// Scrape fetches target and parses it as the text exposition format. Its
// errors wrap ErrScrape and read as a sentence for the job's reader.
func (s *Scraper) Scrape(ctx context.Context, target string) (Exposition, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a URL", ErrScrape, Redacted(target))
	}
	target = req.URL.Redacted() // for messages: no password
	req.Header.Set("Accept", "text/plain;version="+expfmt.TextVersion)
	req.Header.Set("User-Agent", "benchq-monitor")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrScrape, s.describe(ctx, target, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %s", ErrScrape, target, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %s", ErrScrape, target, s.describe(ctx, target, err))
	}
	if int64(len(body)) > s.maxBody {
		return nil, fmt.Errorf("%w: %s answered more than %d bytes", ErrScrape, target, s.maxBody)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not Prometheus text format: %s", ErrScrape, target, parseMessage(err))
	}
	return fams, nil
}

// Redacted is raw with any password in it replaced, for a message or a
// stored field.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a URL)"
	}
	return u.Redacted()
}

// describe turns a transport error into what happened: the url.Error
// wrapper only repeats the method and URL the message already names.
func (s *Scraper) describe(ctx context.Context, target string, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("%s: no answer within %v", target, s.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " " + ue.URL + ": " + ue.Err.Error()
	}
	return err.Error()
}

func parseMessage(err error) string {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
	}
	return err.Error()
}
