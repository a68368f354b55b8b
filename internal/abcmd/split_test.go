package abcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSplitCommandLine(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t\n ", nil},
		{"-n 1000 -c 50", []string{"-n", "1000", "-c", "50"}},
		{"ab -n 10 http://127.0.0.1:8081/", []string{"-n", "10", "http://127.0.0.1:8081/"}},
		{"http_load -parallel 5", []string{"-parallel", "5"}},
		{"'ab' -n 1", []string{"ab", "-n", "1"}}, // a quoted ab is an argument
		{`\ab x`, []string{"ab", "x"}},
		{"-k ab", []string{"-k", "ab"}}, // only a first word is the program
		{"-H 'Accept: */*' http://127.0.0.1:8081/path",
			[]string{"-H", "Accept: */*", "http://127.0.0.1:8081/path"}},
		{`-H "X-A: \"q\" \$HOME \\ \x"`, []string{"-H", `X-A: "q" $HOME \ \x`}},
		{`-H X-A:\ b`, []string{"-H", "X-A: b"}},
		{"a'b c'd", []string{"ab cd"}},
		{`''`, []string{""}},
		{`"" x`, []string{"", "x"}},
		{"-n 1 \\\n -c 1", []string{"-n", "1", "-c", "1"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{`'it'\''s'`, []string{"it's"}},
		{"a\tb\r\nc", []string{"a", "b", "c"}},
		{"héllo wörld", []string{"héllo", "wörld"}},
		{"x | y; $z", []string{"x", "|", "y;", "$z"}}, // no operators, no expansion
	}
	for _, tt := range tests {
		got, err := SplitCommandLine(tt.in)
		if err != nil {
			t.Errorf("SplitCommandLine(%q) error = %v, want nil", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("SplitCommandLine(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestSplitCommandLineWords(t *testing.T) {
	tests := []struct {
		in    string
		spans []string // in[Start:End] of each word
	}{
		{"", nil},
		{"ab -n 10 http://127.0.0.1:8081/", []string{"-n", "10", "http://127.0.0.1:8081/"}},
		{`  -H 'Authorization: Bearer x'  -kA\ u:p\\ URL`, []string{"-H", "'Authorization: Bearer x'", `-kA\ u:p\\`, "URL"}},
		{`-H "X: \"q\"" a'b c'd ''`, []string{"-H", `"X: \"q\""`, "a'b c'd", "''"}},
		{"\\\n-C x\\\n", []string{"-C", "x\\\n"}}, // a continuation joins, so it is inside the word
		{"'ab' -C\tc=1", []string{"'ab'", "-C", "c=1"}},
	}
	for _, tt := range tests {
		words, err := SplitCommandLineWords(tt.in)
		if err != nil {
			t.Errorf("SplitCommandLineWords(%q) error = %v", tt.in, err)
			continue
		}
		var spans []string
		for _, w := range words {
			spans = append(spans, tt.in[w.Start:w.End])
		}
		if diff := cmp.Diff(tt.spans, spans); diff != "" {
			t.Errorf("SplitCommandLineWords(%q) spans mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestSplitCommandLineErrors(t *testing.T) {
	for _, in := range []string{`'abc`, `"abc`, `-H "a\"`, `abc\`, `x 'y" z`} {
		got, err := SplitCommandLine(in)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("SplitCommandLine(%q) = %q, %v, want ErrSyntax", in, got, err)
		}
	}
}

func TestSplitCommandLineWordLimit(t *testing.T) {
	atLimit := strings.Repeat("w ", MaxWords)
	if got, err := SplitCommandLine(atLimit); err != nil || len(got) != MaxWords {
		t.Errorf("SplitCommandLine(%d words) = %d words, %v, want them all", MaxWords, len(got), err)
	}
	// A line of a million words stops at the limit, not after splitting all.
	for _, in := range []string{atLimit + "w", strings.Repeat("-H 'X: y' ", 1<<20)} {
		got, err := SplitCommandLine(in)
		if !errors.Is(err, ErrTooManyWords) {
			t.Errorf("SplitCommandLine(%d bytes) = %d words, %v, want ErrTooManyWords", len(in), len(got), err)
		}
	}
}

func TestJoinCommandLine(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"-n", "10", "http://127.0.0.1:8081/a?b=c"}, "-n 10 'http://127.0.0.1:8081/a?b=c'"},
		{[]string{"-H", "Accept: */*"}, "-H 'Accept: */*'"},
		{[]string{"it's", ""}, `'it'\''s' ''`},
		{[]string{"ab", "ab"}, "'ab' ab"},
	}
	for _, tt := range tests {
		got := JoinCommandLine(tt.in)
		if got != tt.want {
			t.Errorf("JoinCommandLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := SplitCommandLine(got)
		if err != nil || !cmp.Equal(back, tt.in, cmpopts.EquateEmpty()) {
			t.Errorf("SplitCommandLine(JoinCommandLine(%q)) = %q, %v, want the words back", tt.in, back, err)
		}
	}
}
