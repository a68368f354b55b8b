package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandTableHelp walks the command table: every command is listed
// by `benchq --help` and `benchq help` with its usage line, and `benchq
// help NAME` prints that command's help on stdout with exit 0.
func TestCommandTableHelp(t *testing.T) {
	var flagHelp, helpList, stderr bytes.Buffer
	if got := run(t.Context(), []string{"--help"}, nil, &flagHelp, &stderr); got != 0 {
		t.Fatalf("benchq --help = exit %d: %s", got, stderr.String())
	}
	if got := run(t.Context(), []string{"help"}, nil, &helpList, &stderr); got != 0 {
		t.Fatalf("benchq help = exit %d: %s", got, stderr.String())
	}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			if c.usage == "" || c.summary == "" || strings.Contains(c.summary, "\n") {
				t.Errorf("command %q: usage %q, summary %q; want both, the summary on one line", c.name, c.usage, c.summary)
			}
			if !strings.HasPrefix(c.usage, "benchq ") || !strings.Contains(c.usage, c.name) {
				t.Errorf("command %q: usage %q does not start with its name", c.name, c.usage)
			}
			for what, out := range map[string]string{"benchq --help": flagHelp.String(), "benchq help": helpList.String()} {
				if !strings.Contains(out, "  "+c.usage+"\n      "+c.summary+"\n") {
					t.Errorf("%s does not list %q with its summary:\n%s", what, c.usage, out)
				}
			}
			var stdout, stderr bytes.Buffer
			if got := run(t.Context(), []string{"help", c.name}, nil, &stdout, &stderr); got != 0 {
				t.Errorf("benchq help %s = exit %d, stderr %q", c.name, got, stderr.String())
			}
			// It is that command's help (all, serve, worker and ab write
			// "Usage:" as ab does).
			if first, _, _ := strings.Cut(stdout.String(), "\n"); !strings.HasPrefix(strings.ToLower(first), "usage: benchq ") || !strings.Contains(first, c.name) {
				t.Errorf("benchq help %s starts %q, want \"usage: benchq ... %s ...\"", c.name, first, c.name)
			}
			if stderr.Len() > 0 {
				t.Errorf("benchq help %s wrote to stderr: %q", c.name, stderr.String())
			}
		})
	}
}

// TestUnknownCommandSuggests: a mistyped command is refused with the
// nearest command's name, at once and by `benchq help`; a word near no
// command gets no guess.
func TestUnknownCommandSuggests(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sumbit", "job.json"}, 2, `benchq: unknown command "sumbit"; did you mean "submit"?`},
		{[]string{"wrker"}, 2, `benchq: unknown command "wrker"; did you mean "worker"?`},
		{[]string{"lsit"}, 2, `benchq: unknown command "lsit"; did you mean "list"?`},
		{[]string{"healtcheck"}, 2, `benchq: unknown command "healtcheck"; did you mean "healthcheck"?`},
		{[]string{"Help"}, 2, `benchq: unknown command "Help"; did you mean "help"?`},
		{[]string{"frobnicate"}, 2, "benchq: unknown command \"frobnicate\"\nRun 'benchq help' for the commands."},
		{[]string{"help", "sumbit"}, 3, `benchq help: unknown command "sumbit"; did you mean "submit"?`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if got := run(t.Context(), tt.args, nil, &stdout, &stderr); got != tt.code {
			t.Errorf("benchq %q = exit %d, want %d", tt.args, got, tt.code)
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("benchq %q stderr = %q, want %q", tt.args, stderr.String(), tt.want)
		}
		if strings.Contains(tt.want, "did you mean") != strings.Contains(stderr.String(), "did you mean") {
			t.Errorf("benchq %q stderr = %q: a guess where none was wanted, or none", tt.args, stderr.String())
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"submit", "submit", 0},
		{"sumbit", "submit", 1}, // one transposition
		{"sbmit", "submit", 1},
		{"submitt", "submit", 1},
		{"wrker", "worker", 1},
		{"", "ab", 2},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
