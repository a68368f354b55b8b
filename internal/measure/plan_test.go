package measure

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ok := Plan{URLs: []string{"http://127.0.0.1:8080/"}, Requests: 10}
	tests := []struct {
		name   string
		change func(*Plan)
		want   string // substring of the error; "" for valid
	}{
		{"valid", func(*Plan) {}, ""},
		{"duration only", func(p *Plan) { p.Requests, p.Duration = 0, time.Second }, ""},
		{"https ipv6", func(p *Plan) { p.URLs = []string{"https://[::1]:8443/x"} }, ""},
		{"no urls", func(p *Plan) { p.URLs = nil }, "urls: at least one"},
		{"bad scheme", func(p *Plan) { p.URLs = []string{"ftp://127.0.0.1/"} }, "urls[0]: scheme"},
		{"no host", func(p *Plan) { p.URLs = []string{"http:///x"} }, "urls[0]: no host"},
		{"bad port", func(p *Plan) { p.URLs = []string{"http://127.0.0.1:0/"} }, "port"},
		{"unbounded", func(p *Plan) { p.Requests = 0 }, "requests or duration"},
		{"negative requests", func(p *Plan) { p.Requests = -1 }, "requests: -1"},
		{"too many workers", func(p *Plan) { p.Concurrency = MaxConcurrency + 1 }, "concurrency"},
		{"NaN rate", func(p *Plan) { p.Rate = math.NaN() }, "rate"},
		{"negative timeout", func(p *Plan) { p.Timeout = -time.Second }, "timeout"},
		{"negative max body", func(p *Plan) { p.MaxBody = -1 }, "max_body: -1"},
		{"max body of one byte", func(p *Plan) { p.MaxBody = 1 }, ""},
		{"bad method", func(p *Plan) { p.Method = "GE T" }, "method"},
		{"body with GET", func(p *Plan) { p.Method, p.Body = "GET", []byte("x") }, "body"},
		{"header injection", func(p *Plan) { p.Headers = []Header{{"X", "a\r\nB: c"}} }, "headers[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.change(&p)
			err := p.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (!errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want ErrInvalidPlan mentioning %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Plan{Concurrency: -1, Timeout: -1}.Validate()
	for _, want := range []string{"urls", "requests or duration", "concurrency", "timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	p := Plan{Body: []byte("x")}.WithDefaults()
	if p.Method != "POST" || p.Concurrency != 1 || p.Timeout != DefaultTimeout ||
		p.ContentType != DefaultContentType || p.ProgressInterval != DefaultProgressInterval || p.MaxBody != DefaultMaxBody {
		t.Errorf("WithDefaults() = %+v, want POST, 1 worker, 30s, text/plain, 250ms, 1 GiB bodies", p)
	}
	if m := (Plan{}).WithDefaults().Method; m != "GET" {
		t.Errorf("WithDefaults().Method = %q, want GET", m)
	}
}
