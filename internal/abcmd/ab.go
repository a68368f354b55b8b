package abcmd

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// Format is the report format of `benchq ab`.
type Format string

// The report formats --format accepts; --json is --format json.
const (
	FormatAB       Format = "ab"        // ab's text report (the default)
	FormatHTTPLoad Format = "http_load" // http_load's summary
	FormatJSON     Format = "json"      // the ab-compatible JSON result
)

// TimeLimitRequests is the request count -t implies (ab's MAX_REQUESTS): ab
// stops a timed run after that many requests unless a later -n replaces it.
const TimeLimitRequests = 50000

// UserAgent is the User-Agent ab sends, and so does every ab command line
// unless a -H line gives another.
const UserAgent = "ApacheBench/2.3"

// maxSeconds bounds -t and -s so that seconds convert to a time.Duration
// without overflow (68 years is no real limit).
const maxSeconds = 1 << 31

// AB is a parsed ab command line: the run it asks for and how to report it.
type AB struct {
	// Plan is the run. Its Body is empty until SetBody: ab reads the body
	// from BodyFile, and only the caller may read files. Plan.URLs is empty
	// when the URLs come from URLsFile alone.
	Plan measure.Plan

	BodyFile string // -p or -u: the file whose bytes are the request body

	Quiet         bool   // -q: no "Completed N requests" heartbeat
	CSVFile       string // -e: write ab's percentile CSV there
	GnuplotFile   string // -g: write ab's per-request TSV there (Plan.RecordSamples is set)
	TimelineFile  string // --timeline: write the run's timeline there, NDJSON, one line per interval
	NoConfidence  bool   // -S: min/avg/max table, no sd, median or warnings
	NoPercentiles bool   // -d: no percentile block
	Verbosity     int    // -v: accepted for compatibility; benchq prints no request traces
	Format        Format // --format, --json; FormatAB by default
	URLsFile      string // --urls: a file of URLs, one a line, read with ParseURLList

	// TLS: -f and -Z as given (their meaning is in Plan.TLS), the files
	// of -E (certificate and key in one PEM file) and --cacert, which the
	// caller reads (SetClientCert, SetCA), and --verify. --insecure and
	// --sni are in Plan.TLS.
	Protocol string
	Ciphers  string
	CertFile string
	CAFile   string
	Verify   bool
}

// SetBody makes b the request body of every request (the bytes of BodyFile).
func (a *AB) SetBody(b []byte) { a.Plan.Body = b }

// AddURLs appends urls (from ParseURLList) to the plan's targets; each
// request then picks one at random, as http_load does.
func (a *AB) AddURLs(urls []string) { a.Plan.URLs = append(a.Plan.URLs, urls...) }

// Host is the host name ab prints in "Benchmarking HOST (be patient)": the
// first URL's host without port or IPv6 brackets; "" before there is a URL.
func (a *AB) Host() string {
	if len(a.Plan.URLs) == 0 {
		return ""
	}
	u, err := url.Parse(a.Plan.URLs[0])
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Args returns a canonical command line for a (without the program name):
// ParseAB(a.Args()) yields a again. The job API uses it to show what a target will run.
func (a *AB) Args() []string {
	p := &a.Plan
	var args []string
	add := func(s ...string) { args = append(args, s...) }
	if p.Duration > 0 {
		add("-t", strconv.FormatInt(int64(p.Duration/time.Second), 10))
	}
	if p.Requests > 0 || p.Duration == 0 { // a warm-up's timed run has none
		add("-n", strconv.Itoa(p.Requests))
	}
	add("-c", strconv.Itoa(p.Concurrency))
	if p.Timeout > 0 {
		add("-s", strconv.FormatInt(int64(p.Timeout/time.Second), 10))
	}
	args = append(args, a.methodArgs()...)
	if p.ContentType != "" {
		add("-T", p.ContentType)
	}
	for i, h := range p.Headers {
		args = append(args, headerArgs(h, i < p.LeadingHeaders)...)
	}
	args = append(args, a.switchArgs()...)
	if p.Rate > 0 {
		rate := strconv.FormatFloat(p.Rate, 'g', -1, 64)
		if p.RateRamp() && len(p.Stages) == 1 {
			rate += ":" + strconv.FormatFloat(p.Stages[0].Rate, 'g', -1, 64)
		}
		add("--rate", rate)
	}
	if p.HTTPVersion != "" && p.HTTPVersion != measure.HTTP10 {
		add("--http-version", p.HTTPVersion)
	}
	if p.MaxStreams > 0 {
		add("--max-streams", strconv.Itoa(p.MaxStreams))
	}
	if p.MaxBody > 0 {
		add("--max-body", strconv.FormatInt(p.MaxBody, 10))
	}
	if a.URLsFile != "" {
		add("--urls", a.URLsFile)
	}
	args = append(args, a.tlsArgs()...)
	return append(args, p.URLs...)
}

// headerArgs renders one header of the plan: as -C or -A when it is one of
// the leading headers those flags make, so it keeps its place in ab's
// request, else as -H.
func headerArgs(h measure.Header, leading bool) []string {
	if leading && h.Key == "Cookie" {
		return []string{"-C", h.Value}
	}
	if b64, ok := strings.CutPrefix(h.Value, "Basic "); leading && h.Key == "Authorization" && ok {
		if cred, err := base64.StdEncoding.DecodeString(b64); err == nil {
			return []string{"-A", string(cred)}
		}
	}
	return []string{"-H", h.Key + ": " + h.Value}
}

func (a *AB) methodArgs() []string {
	m := a.Plan.Method
	switch {
	case a.BodyFile != "" && m == "POST":
		return []string{"-p", a.BodyFile}
	case a.BodyFile != "" && m == "PUT":
		return []string{"-u", a.BodyFile}
	case a.BodyFile != "":
		return []string{"-p", a.BodyFile, "-m", m}
	case m == "HEAD":
		return []string{"-i"}
	case m != "GET":
		return []string{"-m", m}
	}
	return nil
}

func (a *AB) tlsArgs() []string {
	var args []string
	flag := func(on bool, name string, value ...string) {
		if on {
			args = append(append(args, name), value...)
		}
	}
	flag(a.Protocol != "", "-f", a.Protocol)
	flag(a.Ciphers != "", "-Z", a.Ciphers)
	flag(a.CertFile != "", "-E", a.CertFile)
	flag(a.CAFile != "", "--cacert", a.CAFile)
	flag(a.Verify, "--verify")
	flag(a.Plan.TLS.SkipVerify, "--insecure")
	flag(a.Plan.TLS.ServerName != "", "--sni", a.Plan.TLS.ServerName)
	return args
}

func (a *AB) switchArgs() []string {
	var args []string
	flag := func(on bool, name string, value ...string) {
		if on {
			args = append(append(args, name), value...)
		}
	}
	flag(a.Plan.KeepAlive, "-k")
	flag(a.Plan.AcceptVariableLength, "-l")
	flag(a.Plan.ContinueOnError, "-r")
	flag(a.Quiet, "-q")
	flag(a.NoConfidence, "-S")
	flag(a.NoPercentiles, "-d")
	flag(a.Verbosity != 0, "-v", strconv.Itoa(a.Verbosity))
	flag(a.CSVFile != "", "-e", a.CSVFile)
	flag(a.GnuplotFile != "", "-g", a.GnuplotFile)
	flag(a.TimelineFile != "", "--timeline", a.TimelineFile)
	flag(a.Plan.Warmup > 0, "--warmup", a.Plan.Warmup.String())
	flag(a.Format != FormatAB, "--format", string(a.Format))
	return args
}
