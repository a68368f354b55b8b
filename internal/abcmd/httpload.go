package abcmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// HTTPLoadTimeout is http_load's default -timeout: 60 seconds.
const HTTPLoadTimeout = 60 * time.Second

// HTTPLoad is a parsed http_load command line.
type HTTPLoad struct {
	// Plan is the run without its URLs, which come from the URL file (or a
	// job's list): -parallel is Concurrency, -rate is Rate, -fetches is
	// Requests, -seconds is Duration, -timeout is Timeout. Connections are
	// never reused and no failure stops the run, as with http_load. Every
	// length is accepted: http_load compares byte counts per URL, the
	// engine would compare every URL's with the first response's.
	Plan measure.Plan

	// Jitter is -jitter. It is accepted, but the engine paces starts at
	// exact intervals, which loads the target at least as evenly.
	Jitter bool

	// URLsFile is http_load's url_file operand, "" when none was given.
	URLsFile string
}

// httpLoadOption is one of http_load's options, in the order http_load
// tries them: an argument that is a prefix of several names ("-t") means the
// first of them, as in http_load.
type httpLoadOption struct {
	name      string
	value     bool   // takes a value
	supported string // "" when benchq supports it; otherwise why not
}

func httpLoadOptions() []httpLoadOption {
	const noTLS = "benchq picks TLS parameters itself"
	return []httpLoadOption{
		{name: "-checksum", supported: "benchq compares body lengths, not checksums"},
		{name: "-throttle", supported: "benchq does not throttle reads"},
		{name: "-Throttle", value: true, supported: "benchq does not throttle reads"},
		{name: "-verbose"},
		{name: "-timeout", value: true},
		{name: "-jitter"},
		{name: "-parallel", value: true},
		{name: "-rate", value: true},
		{name: "-fetches", value: true},
		{name: "-seconds", value: true},
		{name: "-proxy", value: true, supported: "a proxy would route the load around the address policy"},
		{name: "-sip", value: true, supported: "benchq binds no source address"},
		{name: "-cipher", value: true, supported: noTLS},
	}
}

// ParseHTTPLoad parses http_load's options (without the program name):
// exactly one of -parallel N and -rate N (-jitter only with -rate), exactly
// one of -fetches N and -seconds N, -timeout secs, and at most one operand,
// the URL file. As in http_load, any option may be abbreviated to a prefix
// ("-p 5 -f 100"). Errors are *UsageError.
func ParseHTTPLoad(args []string) (*HTTPLoad, error) {
	h := &HTTPLoad{Plan: measure.Plan{Method: "GET", Timeout: HTTPLoadTimeout,
		ContinueOnError: true, AcceptVariableLength: true}}
	set := map[string]string{}
	i := 0
	for ; i < len(args) && len(args[i]) > 1 && args[i][0] == '-'; i++ {
		o, ok := findHTTPLoadOption(args[i])
		switch {
		case !ok:
			return nil, usageErr("unknown option " + args[i])
		case o.supported != "":
			return nil, usageErr(o.name + " is not supported by benchq: " + o.supported)
		case !o.value:
			set[o.name] = ""
			continue
		case i+1 >= len(args):
			return nil, usageErr(o.name + " requires a value")
		}
		i++
		set[o.name] = args[i]
	}
	switch rest := args[i:]; len(rest) {
	case 0:
	case 1:
		h.URLsFile = rest[0]
	default:
		return nil, usageErr("wrong number of arguments")
	}
	if err := h.apply(set); err != nil {
		return nil, err
	}
	return h, nil
}

func findHTTPLoadOption(arg string) (httpLoadOption, bool) {
	for _, o := range httpLoadOptions() {
		if strings.HasPrefix(o.name, arg) {
			return o, true
		}
	}
	return httpLoadOption{}, false
}

// apply turns the options given (name -> value) into the plan.
func (h *HTTPLoad) apply(set map[string]string) error {
	_, parallel := set["-parallel"]
	_, rate := set["-rate"]
	_, fetches := set["-fetches"]
	_, seconds := set["-seconds"]
	_, h.Jitter = set["-jitter"]
	switch {
	case parallel == rate:
		return usageErr("exactly one of -parallel and -rate is required")
	case fetches == seconds:
		return usageErr("exactly one of -fetches and -seconds is required")
	case h.Jitter && !rate:
		return usageErr("-jitter needs -rate")
	}
	p := &h.Plan
	for _, o := range httpLoadOptions() { // in a fixed order, so the first bad value is named
		if v, ok := set[o.name]; ok && o.value {
			if err := h.setValue(o.name, v); err != nil {
				return err
			}
		}
	}
	if rate {
		// Enough workers for a second of latency at the rate: the open
		// model needs a cap on requests in flight, http_load has none.
		p.Concurrency = int(min(math.Ceil(p.Rate), measure.MaxConcurrency))
		if p.Requests > 0 {
			p.Concurrency = min(p.Concurrency, p.Requests)
		}
	}
	return nil
}

// setValue applies one option with a numeric value.
func (h *HTTPLoad) setValue(name, v string) error {
	p := &h.Plan
	if name == "-rate" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(r, 0) || !(r > 0) {
			return usageErr(fmt.Sprintf("invalid -rate %q: want starts per second > 0", v))
		}
		p.Rate = r
		return nil
	}
	n, err := strconv.Atoi(v)
	limit := maxSeconds
	if name == "-parallel" {
		limit = measure.MaxConcurrency
	}
	if err != nil || n < 1 || (name != "-fetches" && n > limit) {
		return usageErr(fmt.Sprintf("invalid %s %q", name, v))
	}
	switch name {
	case "-parallel":
		p.Concurrency = n
	case "-fetches":
		p.Requests = n
	case "-seconds":
		p.Duration = time.Duration(n) * time.Second
	case "-timeout":
		p.Timeout = time.Duration(n) * time.Second
	}
	return nil
}
