package abcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzSplitCommandLine checks that splitting never panics, that joining the
// words and splitting again gives them back, that each word's span, split
// alone, is that word, and that a line without quotes or backslashes splits
// like strings.Fields.
func FuzzSplitCommandLine(f *testing.F) {
	for _, s := range []string{"-n 10 -H 'Accept: */*' http://127.0.0.1/", `a"b\"c"d`, `'x`, "ab ab", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitCommandLine(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("SplitCommandLine(%q) error = %v, want ErrSyntax", s, err)
			}
			return
		}
		spans, err := SplitCommandLineWords(s)
		if err != nil || len(spans) != len(words) {
			t.Fatalf("SplitCommandLineWords(%q) = %d words, %v; SplitCommandLine gave %d", s, len(spans), err, len(words))
		}
		for i, w := range spans {
			if i > 0 && w.Start < spans[i-1].End {
				t.Fatalf("SplitCommandLineWords(%q): word %d starts at %d, inside word %d", s, i, w.Start, i-1)
			}
			sp := splitter{s: s[w.Start:w.End]}
			if err := sp.run(); err != nil || len(sp.words) != 1 || sp.words[0].Text != w.Text {
				t.Fatalf("SplitCommandLineWords(%q): span %q of word %q splits to %v, %v", s, s[w.Start:w.End], w.Text, sp.words, err)
			}
		}
		joined := JoinCommandLine(words)
		back, err := SplitCommandLine(joined)
		if err != nil || !cmp.Equal(words, back, cmpopts.EquateEmpty()) {
			t.Fatalf("SplitCommandLine(JoinCommandLine(%q)) = %q, %v, want the words back (joined %q)", words, back, err, joined)
		}
		if strings.ContainsAny(s, `'"\`) {
			return
		}
		fields := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" \t\r\n", r) })
		if len(fields) > 0 && isProgramName(fields[0]) {
			fields = fields[1:]
		}
		if !cmp.Equal(fields, words, cmpopts.EquateEmpty()) {
			t.Fatalf("SplitCommandLine(%q) = %q, want %q", s, words, fields)
		}
	})
}

// FuzzParseAB checks that ParseAB never panics, fails only with its
// documented errors, and that whatever it accepts is a runnable plan that
// survives the round trip through Args.
func FuzzParseAB(f *testing.F) {
	for _, tt := range abCases {
		f.Add(tt.line)
	}
	f.Add("-c 10 -n 5 http://127.0.0.1/")
	f.Add("-kqn100 -c2 -H 'Host: x' -C a=1 -A u:p -p f -m PATCH -e e -g g --rate 3 http://127.0.0.1/")
	f.Fuzz(func(t *testing.T, line string) {
		args, err := SplitCommandLine(line)
		if err != nil {
			return
		}
		a, err := ParseAB(args)
		if err != nil {
			checkABError(t, args, err)
			return
		}
		checkAB(t, args, a)
		again, err := ParseAB(a.Args())
		if err != nil {
			t.Fatalf("ParseAB(%q) (Args of ParseAB(%q)) error = %v", a.Args(), args, err)
		}
		if diff := cmp.Diff(a, again); diff != "" {
			t.Fatalf("ParseAB(Args()) of %q mismatch (-first +second):\n%s", args, diff)
		}
	})
}

func checkABError(t *testing.T, args []string, err error) {
	t.Helper()
	var ue *UsageError
	var ie *InputError
	switch {
	case errors.As(err, &ue), errors.As(err, &ie), errors.Is(err, ErrHelp),
		errors.Is(err, ErrVersion), errors.Is(err, measure.ErrInvalidPlan):
	default:
		t.Fatalf("ParseAB(%q) error = %v (%T), want a documented error", args, err, err)
	}
}

func checkAB(t *testing.T, args []string, a *AB) {
	t.Helper()
	p := a.Plan
	// A ramp (or a warm-up) is ended by -t alone, without -t's implied -n.
	timedOnly := p.Requests == 0 && p.Duration > 0 && (len(p.Stages) > 0 || p.Warmup > 0)
	if !timedOnly && (p.Requests < 1 || p.Concurrency < 1 || p.Concurrency > p.Requests) {
		t.Fatalf("ParseAB(%q): n=%d c=%d, want 1 <= c <= n", args, p.Requests, p.Concurrency)
	}
	if len(p.URLs) > 1 || (len(p.URLs) == 0 && a.URLsFile == "") {
		t.Fatalf("ParseAB(%q): URLs %q with --urls %q, want one URL or a URL file", args, p.URLs, a.URLsFile)
	}
	if len(p.URLs) == 1 {
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseAB(%q).Plan.Validate() = %v, want nil", args, err)
		}
	}
}
