package job

import (
	"fmt"
	"strings"

	"github.com/benchq/benchq/internal/abcmd"
	"github.com/benchq/benchq/internal/loadgen"
)

// abOptions is ab 2.3's getopt string (with its TLS options): a letter
// followed by ':' takes a value. It lets serverSideEffects skip flag values
// exactly as ab would, so "-H '-p: x'" is not mistaken for -p.
const abOptions = "n:c:t:s:b:T:p:u:v:lrkVhwiIx:y:z:C:H:P:A:g:X:de:SqB:m:Z:f:E:"

// forbiddenAB are ab flags that make sense on a user's machine but not on a
// shared worker: they read or write the worker's files or route the load
// around the address policy.
var forbiddenAB = map[byte]string{
	'p': "-p reads a file on the server: put the body in request.body",
	'u': "-u reads a file on the server: put the body in request.body and set request.method PUT",
	'e': "-e writes a file on the server: fetch the report with format=csv instead",
	'g': "-g writes a file on the server: fetch the report with format=gnuplot instead",
	'E': "-E reads a certificate file on the server",
	'X': "-X sends the load through a proxy the address policy cannot check",
}

// parseABTarget parses a target's ab command line into a plan.
func parseABTarget(line string) (loadgen.Plan, error) {
	args, err := abcmd.SplitCommandLine(line)
	if err != nil {
		return loadgen.Plan{}, err
	}
	if msg := serverSideEffects(args); msg != "" {
		return loadgen.Plan{}, fmt.Errorf("%s", msg)
	}
	ab, err := abcmd.ParseAB(args)
	if err != nil {
		return loadgen.Plan{}, err
	}
	return ab.Plan, nil
}

// parseHTTPLoadTarget parses a target's http_load flags; its URLs come from
// the target's urls list, never from a file on the server.
func parseHTTPLoadTarget(line string) (loadgen.Plan, error) {
	args, err := abcmd.SplitCommandLine(line)
	if err != nil {
		return loadgen.Plan{}, err
	}
	hl, err := abcmd.ParseHTTPLoad(args)
	if err != nil {
		return loadgen.Plan{}, err
	}
	return hl.Plan, nil
}

// serverSideEffects scans ab arguments as getopt does and returns why the
// first forbidden flag is refused, or "".
func serverSideEffects(args []string) string {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || len(arg) < 2 || arg[0] != '-' {
			return "" // ab stops reading options at the URL
		}
		if name, _, hasValue := strings.Cut(arg, "="); strings.HasPrefix(arg, "--") {
			if name == "--urls" {
				return "--urls reads a file on the server: list the URLs in the target's urls with http_load, or one url per target"
			}
			if !hasValue && abcmd.LongTakesValue(name) {
				i++ // its value is the next word, not the URL
			}
			continue
		}
		for j := 1; j < len(arg); j++ {
			c := arg[j]
			if msg, bad := forbiddenAB[c]; bad {
				return msg
			}
			k := strings.IndexByte(abOptions, c)
			if k < 0 || k+1 >= len(abOptions) || abOptions[k+1] != ':' {
				continue // a switch such as -k; more may follow in the same word
			}
			if j == len(arg)-1 {
				i++ // the value is the next word
			}
			break
		}
	}
	return ""
}
