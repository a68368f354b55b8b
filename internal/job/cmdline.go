package job

import (
	"fmt"
	"iter"
	"strings"

	"github.com/benchq/benchq/internal/abcmd"
	"github.com/benchq/benchq/internal/measure"
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
	'E': "-E reads a certificate file on the server: put it in request.tls.client_cert_pem and client_key_pem",
	'X': "-X sends the load through a proxy the address policy cannot check",
}

// parseABTarget parses a target's ab command line into a plan.
func parseABTarget(line string) (measure.Plan, error) {
	args, err := abcmd.SplitCommandLine(line)
	if err != nil {
		return measure.Plan{}, err
	}
	if msg := serverSideEffects(args); msg != "" {
		return measure.Plan{}, fmt.Errorf("%s", msg)
	}
	ab, err := abcmd.ParseAB(args)
	if err != nil {
		return measure.Plan{}, err
	}
	return ab.Plan, nil
}

// lineMessage is what a client reads of an ab or http_load line's error:
// the parser's words without its package's prefix, which the ab drop-in
// keeps (ab itself prefixes its errors with its name).
func lineMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "abcmd: ")
}

// parseHTTPLoadTarget parses a target's http_load flags; its URLs come from
// the target's urls list, never from a file on the server.
func parseHTTPLoadTarget(line string) (measure.Plan, error) {
	args, err := abcmd.SplitCommandLine(line)
	if err != nil {
		return measure.Plan{}, err
	}
	hl, err := abcmd.ParseHTTPLoad(args)
	if err != nil {
		return measure.Plan{}, err
	}
	return hl.Plan, nil
}

// serverSideEffects returns why the first forbidden flag of ab arguments
// is refused, or "".
func serverSideEffects(args []string) string {
	for o := range abOptionsOf(args) {
		switch o.long {
		case "--urls":
			return "--urls reads a file on the server: list the URLs in the target's urls with http_load, or one url per target"
		case "--cacert":
			return "--cacert reads a file on the server: put the CA bundle in request.tls.ca_pem"
		case "--timeline":
			return "--timeline writes a file on the server: every run keeps its timeline in the job's results"
		case "--warmup":
			return `--warmup belongs to the whole job: give the spec's "warmup" ("warmup": "5s")`
		}
		if msg, bad := forbiddenAB[o.letter]; bad && o.long == "" {
			return msg
		}
	}
	return ""
}

// abOption is one option of an ab line as getopt reads it.
type abOption struct {
	letter byte   // the short option's letter; 0 for a long option
	long   string // a long option's name ("--rate"); "" for a short one
	value  string // its value: "" for a switch, or when it is missing
	// word is the index of the argument holding the value (-1 for none)
	// and at the byte where the value starts in it: 0 when the value is
	// a word of its own, past the letters when joined to them ("-kAu:p").
	word, at int
}

// abOptionsOf yields the options of ab arguments in order, stepping over
// values exactly as ab's getopt does, so "-H '-p: x'" holds no -p and a
// secret is found whether it follows its flag or is joined to it. It ends
// at the URL, at "--", or at the end of args.
func abOptionsOf(args []string) iter.Seq[abOption] {
	return func(yield func(abOption) bool) {
		for i := 0; i < len(args); i++ {
			arg := args[i]
			if arg == "--" || len(arg) < 2 || arg[0] != '-' {
				return // ab stops reading options at the URL
			}
			if strings.HasPrefix(arg, "--") {
				name, value, hasValue := strings.Cut(arg, "=")
				o := abOption{long: name, value: value, word: -1}
				switch {
				case hasValue:
					o.word, o.at = i, len(name)+1
				case abcmd.LongTakesValue(name) && i+1 < len(args):
					i++ // its value is the next word, not the URL
					o.value, o.word = args[i], i
				}
				if !yield(o) {
					return
				}
				continue
			}
			for j := 1; j < len(arg); j++ {
				o := abOption{letter: arg[j], word: -1}
				k := strings.IndexByte(abOptions, o.letter)
				if k < 0 || k+1 >= len(abOptions) || abOptions[k+1] != ':' {
					if !yield(o) { // a switch such as -k; more may follow in the same word
						return
					}
					continue
				}
				switch {
				case j+1 < len(arg):
					o.value, o.word, o.at = arg[j+1:], i, j+1
				case i+1 < len(args):
					i++ // the value is the next word
					o.value, o.word = args[i], i
				}
				if !yield(o) {
					return
				}
				break
			}
		}
	}
}
