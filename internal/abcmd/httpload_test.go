package abcmd

import (
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

func TestParseHTTPLoad(t *testing.T) {
	plan := func(mod func(*measure.Plan)) measure.Plan {
		p := measure.Plan{Method: "GET", Timeout: HTTPLoadTimeout, ContinueOnError: true, AcceptVariableLength: true}
		mod(&p)
		return p
	}
	tests := []struct {
		line string
		want HTTPLoad
	}{
		{"-parallel 100 -fetches 10000", HTTPLoad{Plan: plan(func(p *measure.Plan) {
			p.Concurrency, p.Requests = 100, 10000
		})}},
		{"http_load -p 5 -f 100 urls.txt", HTTPLoad{URLsFile: "urls.txt", Plan: plan(func(p *measure.Plan) {
			p.Concurrency, p.Requests = 5, 100
		})}},
		{"-parallel 10 -seconds 60 -timeout 5 -verbose", HTTPLoad{Plan: plan(func(p *measure.Plan) {
			p.Concurrency, p.Duration, p.Timeout = 10, time.Minute, 5*time.Second
		})}},
		{"-rate 200 -jitter -seconds 10", HTTPLoad{Jitter: true, Plan: plan(func(p *measure.Plan) {
			p.Rate, p.Concurrency, p.Duration = 200, 200, 10*time.Second
		})}},
		{"-r 2.5 -f 1", HTTPLoad{Plan: plan(func(p *measure.Plan) {
			p.Rate, p.Concurrency, p.Requests = 2.5, 1, 1 // workers capped by the fetches
		})}},
		{"-ra 50 -fe 20", HTTPLoad{Plan: plan(func(p *measure.Plan) {
			p.Rate, p.Concurrency, p.Requests = 50, 20, 20
		})}},
	}
	for _, tt := range tests {
		got, err := ParseHTTPLoad(split(t, tt.line))
		if err != nil {
			t.Errorf("ParseHTTPLoad(%s) error = %v, want nil", tt.line, err)
			continue
		}
		if diff := cmp.Diff(&tt.want, got); diff != "" {
			t.Errorf("ParseHTTPLoad(%s) mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestParseHTTPLoadErrors(t *testing.T) {
	tests := []struct{ line, msg string }{
		{"", "exactly one of -parallel and -rate is required"},
		{"-fetches 10", "exactly one of -parallel and -rate is required"},
		{"-parallel 1 -rate 1 -fetches 10", "exactly one of -parallel and -rate is required"},
		{"-parallel 1", "exactly one of -fetches and -seconds is required"},
		{"-parallel 1 -fetches 1 -seconds 1", "exactly one of -fetches and -seconds is required"},
		{"-parallel 1 -jitter -fetches 1", "-jitter needs -rate"},
		{"-parallel 0 -fetches 1", `invalid -parallel "0"`},
		{"-parallel 100001 -fetches 1", `invalid -parallel "100001"`},
		{"-parallel x -fetches 1", `invalid -parallel "x"`},
		{"-parallel 1 -fetches -5", `invalid -fetches "-5"`},
		{"-parallel 1 -seconds 1.5", `invalid -seconds "1.5"`},
		{"-parallel 1 -fetches 1 -timeout 0", `invalid -timeout "0"`},
		{"-rate 0 -fetches 1", `invalid -rate "0": want starts per second > 0`},
		{"-rate Inf -fetches 1", `invalid -rate "Inf": want starts per second > 0`},
		{"-parallel", "-parallel requires a value"},
		{"-parallelx 1 -fetches 1", "unknown option -parallelx"},
		{"-checksum -parallel 1 -fetches 1", "-checksum is not supported by benchq: benchq compares body lengths, not checksums"},
		{"-t -parallel 1 -fetches 1", "-throttle is not supported by benchq: benchq does not throttle reads"},
		{"-proxy 127.0.0.1:3128 -p 1 -f 1", "-proxy is not supported by benchq: a proxy would route the load around the address policy"},
		{"-sip f -p 1 -f 1", "-sip is not supported by benchq: benchq binds no source address"},
		{"-cipher x -p 1 -f 1", "-cipher is not supported by benchq: benchq picks TLS parameters itself"},
		{"-p 1 -f 1 a.txt b.txt", "wrong number of arguments"},
	}
	for _, tt := range tests {
		got, err := ParseHTTPLoad(split(t, tt.line))
		var ue *UsageError
		if got != nil || !errors.As(err, &ue) || ue.Msg != tt.msg {
			t.Errorf("ParseHTTPLoad(%s) = %+v, %v, want UsageError %q", tt.line, got, err, tt.msg)
		}
	}
}
