package abcmd

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// abOptions is ab 2.4.x's getopt string: a letter followed by ':' takes a
// value, either the rest of its word (-n100) or the next word (-n 100).
const abOptions = "n:c:t:s:b:T:p:u:v:lrkVhwiIx:y:z:C:H:P:A:g:X:de:SqB:m:Z:f:E:"

// method is the state of ab's method flags: ab refuses a second -i, -p or
// -u once any method flag (-m included) has been given.
type method int

const (
	methodNone method = iota
	methodSet
)

// abParser is the state of one ParseAB call.
type abParser struct {
	a       AB
	method  method
	cookie  string // -C: the last one wins, as ab
	auth    string // -A
	headers []measure.Header
	// impliedN: the request count is the one -t implies, no -n after it.
	impliedN bool
	// rampTo is the end of --rate FROM:TO's ramp; zero for a fixed rate.
	rampTo float64
}

// ParseAB parses an ab command line (without the program name) with ab
// 2.4.x's meanings: options first, combined as getopt allows (-kq, -n100),
// then exactly one URL. -t sets the request count to TimeLimitRequests where
// it appears, so only a later -n overrides it. The benchq long options
// --json, --format F, --rate R, --urls FILE, --http-version V, --http2,
// --max-streams N and --max-body N may appear among the options; with --urls the URL may be left out. The request is
// ab's: HTTP/1.0, "User-Agent: ApacheBench/2.3" and ab's header order, so
// byte counts match ab's, unless --http-version 1.1 asks for benchq's.
//
// Errors are *UsageError or *InputError with ab's message, ErrHelp (-h),
// ErrVersion (-V), or a wrapped measure.ErrInvalidPlan for what ab would
// send but benchq cannot (a header line with no name).
func ParseAB(args []string) (*AB, error) {
	p := &abParser{a: AB{Format: FormatAB, Plan: measure.Plan{
		Method: "GET", Concurrency: 1, Requests: 1,
		HTTPVersion: measure.HTTP10, UserAgent: UserAgent,
	}}}
	rest, err := p.options(args)
	if err != nil {
		return nil, err
	}
	if err := p.operands(rest); err != nil {
		return nil, err
	}
	return p.finish()
}

// options applies the options and returns the operands after them.
func (p *abParser) options(args []string) ([]string, error) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		var used int
		var err error
		switch {
		case arg == "--":
			return args[i+1:], nil
		case strings.HasPrefix(arg, "--"):
			used, err = p.long(arg, args[i+1:])
		case len(arg) > 1 && arg[0] == '-':
			used, err = p.short(arg, args[i+1:])
		default:
			return args[i:], nil
		}
		if err != nil {
			return nil, err
		}
		i += used
	}
	return nil, nil
}

// short applies one word of short options and returns how many of the
// following words it used as a value (0 or 1).
func (p *abParser) short(arg string, next []string) (int, error) {
	for j := 1; j < len(arg); j++ {
		c := arg[j]
		k := strings.IndexByte(abOptions, c)
		if c == ':' || k < 0 {
			return 0, usageErr("illegal option -- " + string(c))
		}
		if k+1 >= len(abOptions) || abOptions[k+1] != ':' {
			if err := p.apply(c, ""); err != nil {
				return 0, err
			}
			continue
		}
		switch {
		case j+1 < len(arg):
			return 0, p.apply(c, arg[j+1:])
		case len(next) > 0:
			return 1, p.apply(c, next[0])
		default:
			return 0, usageErr("option requires an argument -- " + string(c))
		}
	}
	return 0, nil
}

// long applies one benchq long option, "--name value" or "--name=value".
func (p *abParser) long(arg string, next []string) (int, error) {
	name, value, hasValue := strings.Cut(arg, "=")
	switch name {
	case "--json", "--help", "--insecure", "--verify", "--http2":
		if hasValue {
			return 0, usageErr("option '" + name + "' doesn't allow an argument")
		}
		switch name {
		case "--help":
			return 0, ErrHelp
		case "--insecure":
			p.a.Plan.TLS.SkipVerify = true
		case "--verify":
			p.a.Verify = true
		case "--http2":
			p.a.Plan.HTTPVersion = measure.HTTP2
		default:
			p.a.Format = FormatJSON
		}
		return 0, nil
	case "--format", "--rate", "--urls", "--http-version", "--max-body", "--cacert", "--sni", "--max-streams", "--timeline", "--warmup":
		// LongTakesValue lists these.
	default:
		return 0, usageErr("unrecognized option '" + name + "'")
	}
	used := 0
	if !hasValue {
		if len(next) == 0 {
			return 0, usageErr("option '" + name + "' requires an argument")
		}
		value, used = next[0], 1
	}
	return used, p.applyLong(name, value)
}

// LongTakesValue reports whether the benchq long option name ("--rate")
// takes a value, so a scanner of ab lines can step over it as ParseAB does.
func LongTakesValue(name string) bool {
	switch name {
	case "--format", "--rate", "--urls", "--http-version", "--max-body", "--cacert", "--sni", "--max-streams", "--timeline", "--warmup":
		return true
	}
	return false
}

func (p *abParser) applyLong(name, value string) error {
	switch name {
	case "--format":
		f := Format(value)
		if f != FormatAB && f != FormatHTTPLoad && f != FormatJSON {
			return usageErr(fmt.Sprintf("invalid --format %q: want ab, http_load or json", value))
		}
		p.a.Format = f
	case "--rate":
		from, to, err := ParseRate(value)
		if err != nil {
			return usageErr(fmt.Sprintf("invalid --rate %q: %v", value, err))
		}
		p.a.Plan.Rate, p.rampTo = from, 0
		if to != from {
			p.rampTo = to
		}
	case "--http-version":
		if !measure.KnownHTTPVersion(value) {
			return usageErr(fmt.Sprintf("invalid --http-version %q: want %s", value, measure.HTTPVersionChoices()))
		}
		p.a.Plan.HTTPVersion = value
	case "--urls":
		if value == "" {
			return usageErr("option '--urls' requires a file name")
		}
		p.a.URLsFile = value
	case "--max-streams":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > measure.MaxStreams {
			return usageErr(fmt.Sprintf("invalid --max-streams %q: want 1..%d", value, measure.MaxStreams))
		}
		p.a.Plan.MaxStreams = n
	case "--cacert":
		if value == "" {
			return usageErr("option '--cacert' requires a file name")
		}
		p.a.CAFile = value
	case "--timeline":
		if value == "" {
			return usageErr("option '--timeline' requires a file name")
		}
		p.a.TimelineFile = value
	case "--warmup":
		d, err := time.ParseDuration(value)
		if n, nerr := strconv.Atoi(value); nerr == nil && n <= maxSeconds {
			d, err = time.Duration(n)*time.Second, nil // seconds, as -t
		}
		if err != nil || d <= 0 {
			return usageErr(fmt.Sprintf("invalid --warmup %q: want a duration > 0 (5s, 500ms) or seconds", value))
		}
		p.a.Plan.Warmup = d
	case "--sni":
		if value == "" || strings.ContainsAny(value, " /\r\n\x00") {
			return usageErr(fmt.Sprintf("invalid --sni %q: want a host name", value))
		}
		p.a.Plan.TLS.ServerName = value
	case "--max-body":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n <= 0 {
			return usageErr(fmt.Sprintf("invalid --max-body %q: want a number of bytes > 0", value))
		}
		p.a.Plan.MaxBody = n
	}
	return nil
}

// apply applies one short option; v is its value, "" for a switch.
func (p *abParser) apply(c byte, v string) error {
	a := &p.a
	switch c {
	case 'n', 'c', 't', 's', 'v':
		return p.number(c, v)
	case 'i', 'p', 'u', 'm':
		return p.setMethod(c, v)
	case 'H':
		return p.header(v)
	case 'T':
		if strings.ContainsAny(v, "\r\n") {
			return inputErr(fmt.Sprintf("Invalid content type %q", v))
		}
		a.Plan.ContentType = v
	case 'C':
		p.cookie = strings.TrimSpace(v)
	case 'A':
		p.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(strings.TrimLeft(v, " \t\r\n\v\f")))
	case 'k':
		a.Plan.KeepAlive = true
	case 'l':
		a.Plan.AcceptVariableLength = true
	case 'r':
		a.Plan.ContinueOnError = true
	case 'q':
		a.Quiet = true
	case 'S':
		a.NoConfidence = true
	case 'd':
		a.NoPercentiles = true
	case 'e':
		a.CSVFile = v
	case 'g':
		a.GnuplotFile = v
		a.Plan.RecordSamples = v != ""
	case 'f', 'Z':
		return p.applyTLS(c, v)
	case 'E':
		a.CertFile = v
	case 'V':
		return ErrVersion
	case 'h':
		return ErrHelp
	default:
		return usageErr(fmt.Sprintf("option -%c is not supported by benchq", c))
	}
	return nil
}

// number applies the options with an integer value. Values must be whole
// decimal numbers: ab's atoi would read "10x" as 10 and "abc" as 0.
func (p *abParser) number(c byte, v string) error {
	n, err := strconv.Atoi(v)
	plan := &p.a.Plan
	switch c {
	case 'n':
		if err != nil || n <= 0 {
			return inputErr("Invalid number of requests")
		}
		plan.Requests = n
		p.impliedN = false
	case 'c':
		if err != nil || n < 1 || n > measure.MaxConcurrency {
			return usageErr(fmt.Sprintf("Invalid Concurrency [Range 1..%d]", measure.MaxConcurrency))
		}
		plan.Concurrency = n
	case 't':
		if err != nil || n < 0 || n > maxSeconds {
			return inputErr("Invalid time limit")
		}
		plan.Duration = time.Duration(n) * time.Second
		plan.Requests = TimeLimitRequests
		p.impliedN = true
	case 's':
		if err != nil || n < 1 || n > maxSeconds {
			return inputErr("Invalid timeout")
		}
		plan.Timeout = time.Duration(n) * time.Second
	case 'v':
		if err != nil {
			return inputErr("Invalid verbosity")
		}
		p.a.Verbosity = n
	}
	return nil
}

// setMethod applies -i, -p, -u and -m with ab's rules: -i, -p and -u refuse
// any earlier method flag; -m replaces the method silently, so "-p f -m
// PATCH" sends PATCH with the body while "-m PATCH -p f" is an error.
func (p *abParser) setMethod(c byte, v string) error {
	plan := &p.a.Plan
	if c == 'm' {
		if !measure.IsToken(v) {
			return inputErr(fmt.Sprintf("Invalid method %q", v))
		}
		plan.Method, p.method = v, methodSet
		return nil
	}
	name := map[byte]string{'i': "HEAD", 'p': "POST", 'u': "PUT"}[c]
	if p.method != methodNone {
		return inputErr("Cannot mix " + name + " with other methods")
	}
	plan.Method, p.method = name, methodSet
	if c != 'i' {
		p.a.BodyFile = v
	}
	return nil
}

// header adds one -H line, "Name: value".
func (p *abParser) header(v string) error {
	key, value, ok := strings.Cut(v, ":")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || !measure.IsToken(key) || strings.ContainsAny(value, "\r\n") {
		return inputErr(fmt.Sprintf("Invalid header line %q: want 'Name: value'", v))
	}
	p.headers = append(p.headers, measure.Header{Key: key, Value: value})
	return nil
}

// operands takes the URL: exactly one, or none when --urls names them.
func (p *abParser) operands(rest []string) error {
	switch {
	case len(rest) == 0 && p.a.URLsFile != "":
		return nil
	case len(rest) != 1:
		return usageErr("wrong number of arguments")
	}
	u, err := normalizeURL(rest[0])
	if err != nil {
		return err
	}
	p.a.Plan.URLs = []string{u}
	return nil
}

// finish checks what needs every option at once and assembles the headers
// in ab's order: Cookie, Authorization, then -H lines as given.
func (p *abParser) finish() (*AB, error) {
	a := &p.a
	if a.Plan.Concurrency > a.Plan.Requests {
		return nil, usageErr("Cannot use concurrency level greater than total number of requests")
	}
	if a.BodyFile != "" && (a.Plan.Method == "GET" || a.Plan.Method == "HEAD") {
		return nil, inputErr("Cannot send a request body with " + a.Plan.Method)
	}
	if err := p.warmupWindow(); err != nil {
		return nil, err
	}
	if err := p.rateRamp(); err != nil {
		return nil, err
	}
	if a.Plan.TLS.SkipVerify && (a.Verify || a.CAFile != "") {
		return nil, usageErr("--insecure skips the verification --verify and --cacert ask for: give one or the other")
	}
	var hs []measure.Header
	if p.cookie != "" {
		hs = append(hs, measure.Header{Key: "Cookie", Value: p.cookie})
	}
	if p.auth != "" {
		hs = append(hs, measure.Header{Key: "Authorization", Value: p.auth})
	}
	a.Plan.Headers = append(hs, p.headers...)
	a.Plan.LeadingHeaders = len(hs) // ab sends -C and -A before the body's headers, -H after
	if len(a.Plan.URLs) > 0 {
		if err := a.Plan.Validate(); err != nil {
			return nil, fmt.Errorf("abcmd: %w", err)
		}
	}
	return a, nil
}

// rateRamp makes --rate FROM:TO a ramp over -t's time limit, the one
// stage of the plan; the request count -t implies is dropped, as the ramp
// ends the run (a -n given after -t still may).
func (p *abParser) rateRamp() error {
	plan := &p.a.Plan
	switch {
	case p.rampTo == 0:
		return nil
	case plan.Duration == 0:
		return usageErr("--rate FROM:TO needs -t: the rate ramps over the time limit")
	case plan.Warmup > 0:
		return usageErr("--rate FROM:TO and --warmup: a ramp has no steady window to measure after a warm-up")
	}
	plan.Stages = []measure.Stage{{Duration: plan.Duration, Rate: p.rampTo}}
	if p.impliedN {
		plan.Requests = 0
	}
	return nil
}

// ParseRate reads a rate: a number of request starts per second ("1000"),
// or a linear ramp "FROM:TO" ("100:5000"), both ends above zero. A fixed
// rate gives from == to.
func ParseRate(s string) (from, to float64, err error) {
	a, b, ramp := strings.Cut(s, ":")
	from, err = positiveRate(a)
	if err != nil {
		return 0, 0, err
	}
	if !ramp {
		return from, from, nil
	}
	if to, err = positiveRate(b); err != nil {
		return 0, 0, fmt.Errorf("ramp's end: %w", err)
	}
	return from, to, nil
}

// errRate says what a rate must be.
var errRate = errors.New(`want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`)

func positiveRate(s string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(r, 0) || !(r > 0) {
		return 0, errRate
	}
	return r, nil
}

// warmupWindow applies --warmup's rule: the result covers the -t seconds
// after the warm-up, so the run must be timed, and the request count -t
// implies is dropped (the window ends with its time); a -n after it has
// no window to count in.
func (p *abParser) warmupWindow() error {
	plan := &p.a.Plan
	switch {
	case plan.Warmup == 0:
		return nil
	case plan.Duration == 0:
		return usageErr("--warmup needs -t: the result covers the -t seconds after the warm-up")
	case !p.impliedN:
		return usageErr("--warmup runs for -t seconds after the warm-up: leave out -n")
	}
	plan.Requests = 0
	return nil
}
