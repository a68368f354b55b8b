package abcmd

import (
	"fmt"
	"io"

	"github.com/benchq/benchq/internal/measure"
)

// abUsage lists the options ParseAB accepts, in ab's words where ab has
// them; %[1]s is the program name, %[2]d the default body size cap.
const abUsage = `Usage: %[1]s [options] [http[s]://]hostname[:port]/path
Options are:
    -n requests     Number of requests to perform
    -c concurrency  Number of multiple requests to make at a time
    -t timelimit    Seconds to max. to spend on benchmarking
                    This implies -n 50000
    -s timeout      Seconds to max. wait for each response
                    Default is 30 seconds
    -p postfile     File containing data to POST. Remember also to set -T
    -u putfile      File containing data to PUT. Remember also to set -T
    -T content-type Content-type header to use for POST/PUT data, eg.
                    'application/x-www-form-urlencoded'
                    Default is 'text/plain'
    -v verbosity    Accepted for compatibility; no effect
    -i              Use HEAD instead of GET
    -C attribute    Add cookie, eg. 'Apache=1234'. (the last one is used)
    -H attribute    Add Arbitrary header line, eg. 'Accept-Encoding: gzip'
                    Inserted after all normal header lines. (repeatable)
    -A attribute    Add Basic WWW Authentication, the attributes
                    are a colon separated username and password.
    -V              Print version number and exit
    -k              Use HTTP KeepAlive feature
    -d              Do not show percentiles served table.
    -S              Do not show confidence estimators and warnings.
    -q              Do not show progress when doing more than 150 requests
    -l              Accept variable document length (use this for dynamic pages)
    -g filename     Output collected data to gnuplot format file.
    -e filename     Output CSV file with percentages served
    -r              Don't exit on socket receive errors.
    -m method       Method name
    -f protocol     Specify SSL/TLS protocol
                    (TLS1, TLS1.1, TLS1.2, TLS1.3 or ALL; SSL2, SSL3 refused)
    -Z ciphersuite  Specify SSL/TLS cipher suite (See openssl ciphers);
                    OpenSSL or Go names of TLS 1.0-1.2 suites Go implements
    -E certfile     Specify optional client certificate chain and private key
    -h              Display usage information (this message)
benchq options:
    --json          Print the result as JSON (same as --format json)
    --format f      Report format: ab (default), http_load or json
    --rate r        Open model: start r requests per second at fixed intervals,
                    latency measured from each intended start; -c caps the
                    requests in flight. FROM:TO (100:5000) ramps the rate
                    linearly over -t's time limit
    --urls file     Read URLs from file, one a line; each request picks one
                    at random, as http_load does; the URL argument is optional
    --http-version v
                    1.0 (default) sends ab's request byte for byte; 1.1 sends
                    an HTTP/1.1 request ("Connection: close" without -k);
                    2 speaks HTTP/2 (same as --http2)
    --http2         HTTP/2 as h2load: ALPN h2 over https, h2c with prior
                    knowledge over http; -c is connections, connections are
                    always kept
    --max-streams n HTTP/2: requests in flight per connection, h2load's -m
                    (ab's -m is the method); default 1, at most 1000
    --max-body n    Cut a response body longer than n bytes (default %[2]d)
                    and count the request as failed; bodies are counted,
                    never kept, whatever the cap
    --cacert file   Verify the server's certificate against the PEM CA
                    bundle in file (as ab, no certificate is verified
                    by default)
    --verify        Verify the server's certificate against the system's roots
    --insecure      Verify no certificate (the default here; in a job's ab
                    line, where the service verifies, it must be given)
    --sni name      Send name as the TLS server name and verify it in the
                    certificate, instead of the URL's host
    --timeline file Write the run's timeline to file: one JSON object a line
                    per second of the run (requests, failures, bytes,
                    p50/p90/p99/max latency)
    --warmup d      With -t: load the target for d (5s, or seconds) first;
                    the result covers the -t seconds after it, the
                    timeline both
benchq service options (first on the command line):
    --server URL    Run through the benchq service at URL: the same command
                    line as a job, waited for, its result printed here
                    (API key from BENCHQ_API_KEY, --key-file f or --key k)
    --shards k      With the service: split the run over k worker processes
                    started together, one merged result
Not supported: -b -B -P -X -w -x -y -z -I
`

// WriteUsage writes the usage text for the ab command line, naming the
// program prog (e.g. "benchq ab").
func WriteUsage(w io.Writer, prog string) error {
	if _, err := fmt.Fprintf(w, abUsage, prog, measure.DefaultMaxBody); err != nil {
		return fmt.Errorf("abcmd: write usage: %w", err)
	}
	return nil
}
