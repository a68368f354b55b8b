package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
)

// writeCommands lists the command table under `benchq --help` and
// `benchq help`.
func writeCommands(w io.Writer) {
	fmt.Fprint(w, "\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %s\n      %s\n", c.usage, c.summary)
	}
	fmt.Fprintf(w, `
The client commands take --server URL (env BENCHQ_SERVER, default %s)
and the API key from env BENCHQ_API_KEY or --key-file FILE.
Run 'benchq help COMMAND' for a command's usage and flags.
`, clicmd.DefaultServer)
}

const helpSynopsis = `benchq help [command]

Lists benchq's commands, or shows one command's usage and flags on stdout.`

// runHelp is `benchq help [command]`.
func runHelp(ctx context.Context, args []string, env clicmd.Env) int {
	fs := clicmd.NewFlagSet("benchq help", helpSynopsis, env.Stderr)
	if err := fs.Parse(args); err != nil {
		return clicmd.UsageExit("benchq help", err, env.Stderr)
	}
	switch fs.NArg() {
	case 0:
		fmt.Fprintln(env.Stdout, "usage: benchq [command] [flags]")
		writeCommands(env.Stdout)
		return clicmd.ExitOK
	case 1:
	default:
		fs.Usage()
		return clicmd.UsageExit("benchq help", fmt.Errorf("want at most one command, got %q", fs.Args()), env.Stderr)
	}
	name := fs.Arg(0)
	c, ok := lookup(name)
	switch {
	case !ok:
		fmt.Fprintln(env.Stderr, "benchq help: "+unknownCommand(name))
		return clicmd.ExitError
	case c.run == nil:
		config.Usage(env.Stdout, config.Command(name))
		return clicmd.ExitOK
	}
	// A command's help is what its -h prints; asked for by name, it goes
	// to stdout (so `benchq help submit | less` works) and is a success.
	helpEnv := env
	helpEnv.Stderr = env.Stdout
	args = []string{"-h"}
	if name == "keys" {
		args = nil // keys -h and keys alone print the same help
	}
	c.run(ctx, args, helpEnv)
	return clicmd.ExitOK
}

// unknownCommand says a name is no command, and which one it may be a typo
// of.
func unknownCommand(name string) string {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := suggest(name); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg + "\nRun 'benchq help' for the commands."
}

// suggest is the command name closest to a mistyped one, "" when none is
// close enough to be a typo: at most two edits apart, and fewer edits than
// the typed name has letters.
func suggest(typed string) string {
	best, bestDist := "", 3
	for _, c := range commands() {
		if d := editDistance(strings.ToLower(typed), c.name); d < bestDist && d < len(typed) {
			best, bestDist = c.name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// letters each count one, as "sumbit" is one slip from "submit".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
