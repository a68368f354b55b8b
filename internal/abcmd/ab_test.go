package abcmd

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

const testURL = "http://127.0.0.1:8081/p"

// want returns the AB of "ab URL" changed by mod.
func want(mod func(*AB)) *AB {
	a := &AB{Format: FormatAB, Plan: measure.Plan{
		URLs: []string{testURL}, Method: "GET", Concurrency: 1, Requests: 1,
		HTTPVersion: "1.0", UserAgent: "ApacheBench/2.3",
	}}
	if mod != nil {
		mod(a)
	}
	return a
}

func hdr(kv ...string) []measure.Header {
	var hs []measure.Header
	for i := 0; i+1 < len(kv); i += 2 {
		hs = append(hs, measure.Header{Key: kv[i], Value: kv[i+1]})
	}
	return hs
}

// abCases are command lines ParseAB accepts, with what they mean; the
// round-trip test reuses them.
var abCases = []struct {
	line string
	want *AB
}{
	{"ab " + testURL, want(nil)},
	{"127.0.0.1:8081/p", want(nil)},
	{"https://127.0.0.1/x", want(func(a *AB) { a.Plan.URLs = []string{"https://127.0.0.1/x"} })},
	{"http://[::1]:8081/p?q=1", want(func(a *AB) { a.Plan.URLs = []string{"http://[::1]:8081/p?q=1"} })},
	{"-n 100 " + testURL, want(func(a *AB) { a.Plan.Requests = 100 })},
	{"-n100 -c10 " + testURL, want(func(a *AB) { a.Plan.Requests, a.Plan.Concurrency = 100, 10 })},
	{"-kqn 100 " + testURL, want(func(a *AB) { a.Plan.Requests, a.Plan.KeepAlive, a.Quiet = 100, true, true })},
	{"-t 5 " + testURL, want(func(a *AB) { a.Plan.Requests, a.Plan.Duration = TimeLimitRequests, 5*time.Second })},
	{"-n 10 -t 5 " + testURL, want(func(a *AB) { a.Plan.Requests, a.Plan.Duration = TimeLimitRequests, 5*time.Second })},
	{"-t 5 -n 10 " + testURL, want(func(a *AB) { a.Plan.Requests, a.Plan.Duration = 10, 5*time.Second })},
	{"-t 0 " + testURL, want(func(a *AB) { a.Plan.Requests = TimeLimitRequests })},
	{"-s 7 " + testURL, want(func(a *AB) { a.Plan.Timeout = 7 * time.Second })},
	{"-k " + testURL, want(func(a *AB) { a.Plan.KeepAlive = true })},
	{"-l " + testURL, want(func(a *AB) { a.Plan.AcceptVariableLength = true })},
	{"-r " + testURL, want(func(a *AB) { a.Plan.ContinueOnError = true })},
	{"-q " + testURL, want(func(a *AB) { a.Quiet = true })},
	{"-S " + testURL, want(func(a *AB) { a.NoConfidence = true })},
	{"-d " + testURL, want(func(a *AB) { a.NoPercentiles = true })},
	{"-v 3 " + testURL, want(func(a *AB) { a.Verbosity = 3 })},
	{"-f TLS1.2 " + testURL, want(func(a *AB) {
		a.Protocol, a.Plan.TLS.MinVersion, a.Plan.TLS.MaxVersion = "TLS1.2", tls.VersionTLS12, tls.VersionTLS12
	})},
	{"-f ALL " + testURL, want(func(a *AB) {
		a.Protocol, a.Plan.TLS.MinVersion, a.Plan.TLS.MaxVersion = "ALL", tls.VersionTLS10, tls.VersionTLS13
	})},
	{"-Z ECDHE-RSA-AES128-GCM-SHA256:TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 " + testURL, want(func(a *AB) {
		a.Ciphers = "ECDHE-RSA-AES128-GCM-SHA256:TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
		a.Plan.TLS.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
	})},
	{"-E client.pem " + testURL, want(func(a *AB) { a.CertFile = "client.pem" })},
	{"--cacert ca.pem --sni example.test " + testURL, want(func(a *AB) { a.CAFile, a.Plan.TLS.ServerName = "ca.pem", "example.test" })},
	{"--verify " + testURL, want(func(a *AB) { a.Verify = true })},
	{"--insecure " + testURL, want(func(a *AB) { a.Plan.TLS.SkipVerify = true })},
	{"-H 'Accept: */*' -H X-B:2 -H 'Host: example.test' " + testURL,
		want(func(a *AB) { a.Plan.Headers = hdr("Accept", "*/*", "X-B", "2", "Host", "example.test") })},
	{"-H X-A:1 -C a=1 -C ' b=2 ' " + testURL, want(func(a *AB) { a.Plan.Headers, a.Plan.LeadingHeaders = hdr("Cookie", "b=2", "X-A", "1"), 1 })},
	{"-H 'Cookie: x=1' -H 'Authorization: Bearer t' " + testURL,
		want(func(a *AB) { a.Plan.Headers = hdr("Cookie", "x=1", "Authorization", "Bearer t") })},
	{"-A user:pass -C c=1 " + testURL,
		want(func(a *AB) {
			a.Plan.Headers, a.Plan.LeadingHeaders = hdr("Cookie", "c=1", "Authorization", "Basic dXNlcjpwYXNz"), 2
		})},
	{"-A ' user:pass' " + testURL, want(func(a *AB) {
		a.Plan.Headers, a.Plan.LeadingHeaders = hdr("Authorization", "Basic dXNlcjpwYXNz"), 1
	})},
	{"-p body.txt " + testURL, want(func(a *AB) { a.Plan.Method, a.BodyFile = "POST", "body.txt" })},
	{"-u body.txt -T application/json " + testURL, want(func(a *AB) {
		a.Plan.Method, a.BodyFile, a.Plan.ContentType = "PUT", "body.txt", "application/json"
	})},
	{"-p body.txt -m PATCH " + testURL, want(func(a *AB) { a.Plan.Method, a.BodyFile = "PATCH", "body.txt" })},
	{"-i " + testURL, want(func(a *AB) { a.Plan.Method = "HEAD" })},
	{"-m DELETE " + testURL, want(func(a *AB) { a.Plan.Method = "DELETE" })},
	{"-i -m OPTIONS " + testURL, want(func(a *AB) { a.Plan.Method = "OPTIONS" })},
	{"-e out.csv -g out.tsv " + testURL, want(func(a *AB) {
		a.CSVFile, a.GnuplotFile, a.Plan.RecordSamples = "out.csv", "out.tsv", true
	})},
	{"--json " + testURL, want(func(a *AB) { a.Format = FormatJSON })},
	{"--format http_load " + testURL, want(func(a *AB) { a.Format = FormatHTTPLoad })},
	{"--json --format=ab " + testURL, want(nil)},
	{"--rate 100 -c 10 -n 1000 " + testURL, want(func(a *AB) {
		a.Plan.Rate, a.Plan.Concurrency, a.Plan.Requests = 100, 10, 1000
	})},
	{"--rate=2.5 " + testURL, want(func(a *AB) { a.Plan.Rate = 2.5 })},
	// A ramp runs over -t, and ends the run itself: -t's implied -n is dropped.
	{"--rate 100:5000 -t 60 -c 50 " + testURL, want(func(a *AB) {
		a.Plan.Rate, a.Plan.Concurrency, a.Plan.Duration, a.Plan.Requests = 100, 50, time.Minute, 0
		a.Plan.Stages = []measure.Stage{{Duration: time.Minute, Rate: 5000}}
	})},
	{"-t 10 --rate=5000:100 -n 20000 " + testURL, want(func(a *AB) {
		a.Plan.Rate, a.Plan.Duration, a.Plan.Requests = 5000, 10*time.Second, 20000
		a.Plan.Stages = []measure.Stage{{Duration: 10 * time.Second, Rate: 100}}
	})},
	{"--rate 7:7 -n 10 " + testURL, want(func(a *AB) { a.Plan.Rate, a.Plan.Requests = 7, 10 })},
	{"--urls list.txt", want(func(a *AB) { a.URLsFile, a.Plan.URLs = "list.txt", nil })},
	{"--urls=list.txt " + testURL, want(func(a *AB) { a.URLsFile = "list.txt" })},
	{"-k -- " + testURL, want(func(a *AB) { a.Plan.KeepAlive = true })},
	{"--http-version 1.1 " + testURL, want(func(a *AB) { a.Plan.HTTPVersion = "1.1" })},
	{"--http2 --max-streams 10 -c 4 -n 40 " + testURL, want(func(a *AB) {
		a.Plan.HTTPVersion, a.Plan.MaxStreams, a.Plan.Concurrency, a.Plan.Requests = "2", 10, 4, 40
	})},
	{"--http-version 2 " + testURL, want(func(a *AB) { a.Plan.HTTPVersion = "2" })},
	{"--http-version=1.0 " + testURL, want(nil)},
	{"--max-body 1048576 " + testURL, want(func(a *AB) { a.Plan.MaxBody = 1 << 20 })},
	{"--max-body=1 -k " + testURL, want(func(a *AB) { a.Plan.MaxBody, a.Plan.KeepAlive = 1, true })},
}

func TestParseAB(t *testing.T) {
	for _, tt := range abCases {
		t.Run(tt.line, func(t *testing.T) {
			got, err := ParseAB(split(t, tt.line))
			if err != nil {
				t.Fatalf("ParseAB(%s) error = %v, want nil", tt.line, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAB(%s) mismatch (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestABArgsRoundTrip(t *testing.T) {
	for _, tt := range abCases {
		args := tt.want.Args()
		got, err := ParseAB(args)
		if err != nil {
			t.Errorf("ParseAB(%q) (Args of %s) error = %v, want nil", args, tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseAB(Args()) of %s mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestParseABErrors(t *testing.T) {
	type kind int
	const (
		usage kind = iota
		input
		help
		version
		plan
	)
	tests := []struct {
		line string
		kind kind
		msg  string // for usage and input errors
	}{
		{"", usage, "wrong number of arguments"},
		{"-k", usage, "wrong number of arguments"},
		{testURL + " " + testURL, usage, "wrong number of arguments"},
		{testURL + " -n 5", usage, "wrong number of arguments"},
		{"-c 10 -n 5 " + testURL, usage, "Cannot use concurrency level greater than total number of requests"},
		{"-c 2 " + testURL, usage, "Cannot use concurrency level greater than total number of requests"},
		{"-t 1 -n 5 -c 10 " + testURL, usage, "Cannot use concurrency level greater than total number of requests"},
		{"-n 0 " + testURL, input, "Invalid number of requests"},
		{"-n -1 " + testURL, input, "Invalid number of requests"},
		{"-n abc " + testURL, input, "Invalid number of requests"},
		{"-n 10x " + testURL, input, "Invalid number of requests"},
		{"-c 0 " + testURL, usage, "Invalid Concurrency [Range 1..100000]"},
		{"-c x " + testURL, usage, "Invalid Concurrency [Range 1..100000]"},
		{"-n 200000 -c 100001 " + testURL, usage, "Invalid Concurrency [Range 1..100000]"},
		{"-t -1 " + testURL, input, "Invalid time limit"},
		{"-t 1.5 " + testURL, input, "Invalid time limit"},
		{"-s 0 " + testURL, input, "Invalid timeout"},
		{"-v x " + testURL, input, "Invalid verbosity"},
		{"-Q " + testURL, usage, "illegal option -- Q"},
		{"-k: " + testURL, usage, "illegal option -- :"},
		{"-n", usage, "option requires an argument -- n"},
		{"-k -H", usage, "option requires an argument -- H"},
		{"-X 127.0.0.1:3128 " + testURL, usage, "option -X is not supported by benchq"},
		{"-w " + testURL, usage, "option -w is not supported by benchq"},
		{"-x a " + testURL, usage, "option -x is not supported by benchq"},
		{"-y a " + testURL, usage, "option -y is not supported by benchq"},
		{"-z a " + testURL, usage, "option -z is not supported by benchq"},
		{"-b 4096 " + testURL, usage, "option -b is not supported by benchq"},
		{"-B 127.0.0.1 " + testURL, usage, "option -B is not supported by benchq"},
		{"-P u:p " + testURL, usage, "option -P is not supported by benchq"},
		{"-f SSL3 " + testURL, input, `Invalid -f "SSL3": want TLS1, TLS1.1, TLS1.2, TLS1.3 or ALL (measure: invalid TLS options: SSL3 is not supported: SSL 2 and 3 are broken and Go never spoke them; use TLS 1.0 to 1.3)`},
		{"-f TLS2 " + testURL, input, `Invalid -f "TLS2": want TLS1, TLS1.1, TLS1.2, TLS1.3 or ALL (measure: invalid TLS options: unknown TLS version "TLS2": want 1.0, 1.1, 1.2 or 1.3)`},
		{"-Z HIGH:!aNULL " + testURL, input, `Invalid -Z "HIGH:!aNULL": cipher "HIGH": not a suite Go's TLS offers (OpenSSL keywords and DHE, PSK, CAMELLIA or ARIA suites have no Go counterpart): measure: invalid TLS options: unknown cipher suite "HIGH": want a Go name such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`},
		{"-Z DHE-RSA-AES128-GCM-SHA256 " + testURL, input, `Invalid -Z "DHE-RSA-AES128-GCM-SHA256": cipher "DHE-RSA-AES128-GCM-SHA256": not a suite Go's TLS offers (OpenSSL keywords and DHE, PSK, CAMELLIA or ARIA suites have no Go counterpart): measure: invalid TLS options: unknown cipher suite "DHE-RSA-AES128-GCM-SHA256": want a Go name such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`},
		{"--insecure --cacert ca.pem " + testURL, usage, "--insecure skips the verification --verify and --cacert ask for: give one or the other"},
		{"--sni 'a b' " + testURL, usage, `invalid --sni "a b": want a host name`},
		{"-I " + testURL, usage, "option -I is not supported by benchq"},
		{"-h " + testURL, help, ""},
		{"--help", help, ""},
		{"-V -n 0", version, ""},
		{"-kV", version, ""},
		{"-i -p f " + testURL, input, "Cannot mix POST with other methods"},
		{"-p f -i " + testURL, input, "Cannot mix HEAD with other methods"},
		{"-m PATCH -p f " + testURL, input, "Cannot mix POST with other methods"},
		{"-p f -u g " + testURL, input, "Cannot mix PUT with other methods"},
		{"-i -i " + testURL, input, "Cannot mix HEAD with other methods"},
		{"-p f -m GET " + testURL, input, "Cannot send a request body with GET"},
		{"-m 'BAD METHOD' " + testURL, input, `Invalid method "BAD METHOD"`},
		{"-H NoColon " + testURL, input, `Invalid header line "NoColon": want 'Name: value'`},
		{"-H 'Bad Name: x' " + testURL, input, `Invalid header line "Bad Name: x": want 'Name: value'`},
		{"-H 'X: a\nb' " + testURL, input, "Invalid header line \"X: a\\nb\": want 'Name: value'"},
		{"-T 'a\nb' " + testURL, input, `Invalid content type "a\nb"`},
		{"-C 'a\r\nX: y' " + testURL, plan, ""},
		{"http://127.0.0.1:8081", usage, "invalid URL"},
		{"127.0.0.1", usage, "invalid URL"},
		{"/p", usage, "invalid URL"},
		{"ftp://127.0.0.1/", usage, "invalid URL"},
		{"HTTP://127.0.0.1/", usage, "invalid URL"},
		{"http:///p", usage, "invalid URL"},
		{"http://127.0.0.1:99999/", usage, "invalid URL"},
		{"http://127.0.0.1:x/", usage, "invalid URL"},
		{"http://u:p@127.0.0.1/", usage, "invalid URL"},
		{"'http://127.0.0.1/a b'", usage, "invalid URL"},
		{"--format xml " + testURL, usage, `invalid --format "xml": want ab, http_load or json`},
		{"--rate 0 " + testURL, usage, `invalid --rate "0": want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--rate -1 " + testURL, usage, `invalid --rate "-1": want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--rate NaN " + testURL, usage, `invalid --rate "NaN": want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--rate Inf " + testURL, usage, `invalid --rate "Inf": want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--http-version 3 " + testURL, usage, `invalid --http-version "3": want 1.0, 1.1 or 2`},
		{"--http2 --max-streams 0 " + testURL, usage, `invalid --max-streams "0": want 1..1000`},
		{"--http2 --max-streams 1001 " + testURL, usage, `invalid --max-streams "1001": want 1..1000`},
		{"--max-body 0 " + testURL, usage, `invalid --max-body "0": want a number of bytes > 0`},
		{"--max-body -5 " + testURL, usage, `invalid --max-body "-5": want a number of bytes > 0`},
		{"--max-body 1GiB " + testURL, usage, `invalid --max-body "1GiB": want a number of bytes > 0`},
		{"--max-body 1e9 " + testURL, usage, `invalid --max-body "1e9": want a number of bytes > 0`},
		{"--max-body", usage, "option '--max-body' requires an argument"},
		{"--rate", usage, "option '--rate' requires an argument"},
		{"--rate 100:5000 -n 100 " + testURL, usage, "--rate FROM:TO needs -t: the rate ramps over the time limit"},
		{"--rate 100:0 -t 5 " + testURL, usage, `invalid --rate "100:0": ramp's end: want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--rate :500 -t 5 " + testURL, usage, `invalid --rate ":500": want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--rate 1:2:3 -t 5 " + testURL, usage, `invalid --rate "1:2:3": ramp's end: want requests per second > 0, or a ramp "FROM:TO" such as "100:5000"`},
		{"--rate 1:5 -t 5 --warmup 2s " + testURL, usage, "--rate FROM:TO and --warmup: a ramp has no steady window to measure after a warm-up"},
		{"--json=1 " + testURL, usage, "option '--json' doesn't allow an argument"},
		{"--urls= ", usage, "option '--urls' requires a file name"},
		{"--bogus " + testURL, usage, "unrecognized option '--bogus'"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := ParseAB(split(t, tt.line))
			if got != nil {
				t.Errorf("ParseAB(%s) = %+v, want nil", tt.line, got)
			}
			var ue *UsageError
			var ie *InputError
			switch tt.kind {
			case usage:
				if !errors.As(err, &ue) || ue.Msg != tt.msg {
					t.Errorf("ParseAB(%s) error = %v, want UsageError %q", tt.line, err, tt.msg)
				}
			case input:
				if !errors.As(err, &ie) || ie.Msg != tt.msg {
					t.Errorf("ParseAB(%s) error = %v, want InputError %q", tt.line, err, tt.msg)
				}
			case help, version, plan:
				target := map[kind]error{help: ErrHelp, version: ErrVersion, plan: measure.ErrInvalidPlan}[tt.kind]
				if !errors.Is(err, target) {
					t.Errorf("ParseAB(%s) error = %v, want %v", tt.line, err, target)
				}
			}
		})
	}
}

func TestABHostAndBody(t *testing.T) {
	tests := []struct{ line, host string }{
		{testURL, "127.0.0.1"},
		{"http://[::1]:8081/", "::1"},
		{"localhost/x", "localhost"},
		{"--urls f", ""},
	}
	for _, tt := range tests {
		a, err := ParseAB(split(t, tt.line))
		if err != nil {
			t.Fatalf("ParseAB(%s) error = %v", tt.line, err)
		}
		if got := a.Host(); got != tt.host {
			t.Errorf("ParseAB(%s).Host() = %q, want %q", tt.line, got, tt.host)
		}
	}
	a, err := ParseAB([]string{"-p", "f", "--urls", "u.txt"})
	if err != nil {
		t.Fatalf("ParseAB(-p f --urls u.txt) error = %v", err)
	}
	a.SetBody([]byte("x=1"))
	a.AddURLs([]string{"http://127.0.0.1:1/a", "http://127.0.0.1:1/b"})
	if err := a.Plan.Validate(); err != nil || string(a.Plan.Body) != "x=1" || len(a.Plan.URLs) != 2 {
		t.Errorf("after SetBody and AddURLs: body %q, urls %q, Validate = %v; want x=1, 2 URLs, nil",
			a.Plan.Body, a.Plan.URLs, err)
	}
}

func TestParseURLList(t *testing.T) {
	got, err := ParseURLList("# seeds\nhttp://127.0.0.1:8081/a.html\n\n  127.0.0.1:8081/b.jpg  \r\nhttps://[::1]/c\n")
	wantURLs := []string{"http://127.0.0.1:8081/a.html", "http://127.0.0.1:8081/b.jpg", "https://[::1]/c"}
	if err != nil {
		t.Fatalf("ParseURLList error = %v", err)
	}
	if diff := cmp.Diff(wantURLs, got); diff != "" {
		t.Errorf("ParseURLList mismatch (-want +got):\n%s", diff)
	}
	for in, msg := range map[string]string{
		"":                               "no URL in the URL list",
		"# only a comment\n\n":           "no URL in the URL list",
		"http://127.0.0.1/\nnot a url\n": `invalid URL on line 2: "not a url"`,
		"gopher://127.0.0.1/":            `invalid URL on line 1: "gopher://127.0.0.1/"`,
	} {
		var ie *InputError
		if _, err := ParseURLList(in); !errors.As(err, &ie) || ie.Msg != msg {
			t.Errorf("ParseURLList(%q) error = %v, want InputError %q", in, err, msg)
		}
	}
}

func split(t *testing.T, line string) []string {
	t.Helper()
	args, err := SplitCommandLine(line)
	if err != nil {
		t.Fatalf("SplitCommandLine(%q) error = %v", line, err)
	}
	return args
}
